import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BubbleClient } from '@bubble/sdk';
import { createBubbleServer, createHumanPrincipal, type BubbleServer } from '@bubble/server';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser } from './support/browser.js';
import type { ProbeReport } from './support/backpressure-page/main.js';

/**
 * A browser consumer that falls thousands of events behind, and catches up. The page
 * (support/backpressure-page) is bundled here by Vite from `@bubble/sdk/client`, the entry the
 * web app bundles, with no alias: a page of our own rather than a hook in the product, so the
 * product carries nothing for tests and the page can watch the socket through the factory it
 * hands `BubbleLive` (the browser adapter, wrapped). The real server serves it as its web root,
 * so it runs under the product's CSP, same origin, in Debian's Chromium.
 *
 * The browser's WebSocket cannot pause; the sdk parks the subscription that is behind and
 * catches it up by replay. What must hold: every event once, in order; one socket all along;
 * the heartbeat pinging and answered throughout; no error.
 */
const here = dirname(fileURLToPath(import.meta.url));
const EVENTS = 4_000;

let dir: string;
let server: BubbleServer;
let token: string;
let browser: TestBrowser;
const clients: BubbleClient[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-backpressure-'));
  const webRoot = join(dir, 'page');
  await build({
    configFile: false,
    root: join(here, 'support/backpressure-page'),
    base: '/',
    logLevel: 'warn',
    build: { outDir: webRoot, emptyOutDir: true, target: 'es2022', sourcemap: false },
  });
  server = await createBubbleServer({ dataDir: join(dir, 'data'), host: '127.0.0.1', port: 0, webRoot });
  token = (await createHumanPrincipal(server.store, 'alice', 'Alice')).token.token;
  browser = await openBrowser('backpressure');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const client of clients) client.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const probe = () => browser.page.evaluate(() => window.probe);

describe('a browser consumer that falls behind', () => {
  it('gets every event once and in order, on one socket whose heartbeat never stopped', async () => {
    const writer = new BubbleClient({ url: server.url, token });
    clients.push(writer);
    const { thread } = await writer.createThread({ title: 'slow reader' });
    const { page, step } = browser;

    await step('the page subscribes and stalls after the first event', async () => {
      await page.goto(`${server.url}/?thread=${encodeURIComponent(thread.threadId)}#token=${token}`);
      await page.waitForFunction(() => window.probe?.seqs.length === 1);
    });

    await step(`${EVENTS} events are appended over HTTP while it reads nothing`, async () => {
      for (let batch = 0; batch < EVENTS / 500; batch += 1)
        await writer.appendEvents(
          thread.threadId,
          Array.from({ length: 500 }, (_, i) => ({ type: 'test.note', data: { n: batch * 500 + i } })),
        );
      // Long enough for the backlog to fill its buffer (1 000) and for several heartbeats.
      await page.waitForFunction(() => window.probe.unsubscribes > 0);
      const pingsWhenParked = (await probe()).pings.length;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const stalled = await probe();
      expect(stalled.seqs).toHaveLength(1);
      // The heartbeat goes on while the consumer is stalled: the socket is read all along.
      expect(stalled.pings.length).toBeGreaterThanOrEqual(pingsWhenParked + 2);
    });

    const started = Date.now();
    await step('released, it reads slowly and catches up', async () => {
      await page.evaluate(() => window.releaseConsumer());
      await page.waitForFunction((count) => window.probe.seqs.length >= count, EVENTS + 1, { timeout: 60_000 });
    });
    const caughtUpInMs = Date.now() - started;

    const report: ProbeReport = await probe();
    expect(report.errors).toEqual([]);
    expect(report.seqs).toEqual(Array.from({ length: EVENTS + 1 }, (_, i) => i + 1));
    // One socket, signed in once, still open: no reconnect, no 4008, no dead-link verdict.
    expect(report.sockets).toBe(1);
    expect(report.states).toEqual(['connecting', 'ready']);
    expect(report.socketOpen).toBe(true);
    // It was held back (unsubscribed) and caught up by replay, each time after what it buffered.
    expect(report.unsubscribes).toBeGreaterThan(0);
    expect(report.subscribes).toHaveLength(report.unsubscribes + 1);
    expect(report.subscribes[0]).toBe(0);
    expect([...report.subscribes].sort((a, b) => a - b)).toEqual(report.subscribes);
    // A ping at least every interval + timeout (1.1 s) from start to end, and each one answered.
    const gaps = report.pings.map((at, i) => at - (i === 0 ? report.startedAt : report.pings[i - 1]!));
    expect(report.pings.length).toBeGreaterThan(3);
    expect(Math.max(...gaps, Date.now() - report.pings.at(-1)!)).toBeLessThan(3_000);
    expect(report.pongs).toBeGreaterThanOrEqual(report.pings.length - 1);
    expect(caughtUpInMs).toBeLessThan(60_000);
  });
});
