import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, type Launched } from '../src/launch.js';
import { openBrowser, SCREENSHOT_DIR, type TestBrowser, openSignInLink } from './support/browser.js';

/**
 * A message cannot turn the page against its reader (issue 13, rows 4-6):
 * the real product, the real page in Debian's Chromium, and a second origin
 * on loopback that counts what the page fetches from it and tries to frame it.
 */
let dir: string;
let product: Launched;
let browser: TestBrowser;
let you: BubbleClient;
let other: Server;
let otherUrl: string;
const fetched: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-page-'));
  product = await launch({
    dataDir: join(dir, 'data'),
    port: 0,
    mode: 'double',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  you = new BubbleClient({ url: product.url, token: product.userToken });
  other = createServer((req, res) => {
    fetched.push(req.url ?? '');
    if (req.url === '/frame.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><iframe id="victim" src="${product.signInLink}" width="800" height="600"></iframe>`);
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end();
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  browser = await openBrowser('page-hardening');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  you?.close();
  await product?.stop();
  await new Promise((resolve) => other?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('the page against hostile content', () => {
  it('serves the page with a strict CSP and the API with no-store', async () => {
    const page = await fetch(`${product.url}/`);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "script-src 'self'",
      "frame-ancestors 'none'",
      "img-src 'self' data: blob:",
      "form-action 'self'",
      "connect-src 'self'",
      "object-src 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const api = await fetch(`${product.url}/v1/auth/whoami`, {
      headers: { authorization: `Bearer ${product.userToken}` },
    });
    expect([
      api.headers.get('cache-control'),
      api.headers.get('x-content-type-options'),
      api.headers.get('referrer-policy'),
    ]).toEqual(['no-store', 'nosniff', 'no-referrer']);
  });

  it('draws a hostile message as inert text and safe links, fetches nothing from elsewhere, and keeps the token out of localStorage', async () => {
    const { page, step } = browser;
    await step('sign in', () => openSignInLink(page, product.signInLink));
    await step('live', () => page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor());
    const hostile = [
      '<style>body { display: none }</style>',
      `<div id="overlay" class="approve-form" style="position:fixed;inset:0;z-index:9;background:#fff">Session expired. Paste your token below.</div>`,
      `<form action="${otherUrl}/steal"><input name="token" placeholder="bubble_user_…"><button>Sign in again</button></form>`,
      `![tracker](${otherUrl}/pixel.png)`,
      `<img src="${otherUrl}/raw.png">`,
      `[run me](javascript:alert(1)) [data link](data:text/html,hi) [a site](https://example.com/page) [mail me](mailto:someone@example.com)`,
    ].join('\n\n');
    const runId = 'hostile-1';
    await you.appendEvents(product.welcomeThreadId, [
      { type: 'run_started', data: { runId } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: hostile } } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
      {
        type: 'message_part',
        data: {
          runId,
          chunk: {
            type: 'file',
            url: 'javascript:alert(document.cookie)',
            mediaType: 'text/plain',
            filename: 'evil.txt',
          },
        },
      },
      {
        type: 'message_part',
        data: {
          runId,
          chunk: {
            type: 'file',
            url: 'https://example.com/report.pdf',
            mediaType: 'application/pdf',
            filename: 'report.pdf',
          },
        },
      },
      { type: 'run_finished', data: { runId, status: 'completed' } },
    ]);
    const message = page.locator(`article[data-run-id="${runId}"]`);
    await step('message shown', () => message.getByText('Session expired. Paste your token below.').waitFor());
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await message.screenshot({ path: join(SCREENSHOT_DIR, 'hostile-message.png') });

    expect(await message.locator('style, form, input, button:not(.stop), img, iframe').count()).toBe(0);
    expect(await message.locator('.parts [style], .parts [id]').count()).toBe(0);
    expect(await message.locator('.parts .approve-form').count()).toBe(0);
    // Only http(s) and mailto are links, each in a new tab with no handle on this page. Raw HTML is
    // text, so the URLs written in it are links like any other bare URL: followed only if clicked.
    const links = await message
      .locator('.parts a[href]')
      .evaluateAll((nodes) =>
        nodes.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]),
      );
    expect(links).toEqual([
      [`${otherUrl}/steal`, `${otherUrl}/steal`, '_blank', 'noopener noreferrer'],
      ['tracker (image)', `${otherUrl}/pixel.png`, '_blank', 'noopener noreferrer'],
      [`${otherUrl}/raw.png`, `${otherUrl}/raw.png`, '_blank', 'noopener noreferrer'],
      ['a site', 'https://example.com/page', '_blank', 'noopener noreferrer'],
      ['mail me', 'mailto:someone@example.com', '_blank', 'noopener noreferrer'],
      ['File (application/pdf)', 'https://example.com/report.pdf', '_blank', 'noreferrer noopener'],
    ]);
    expect(await message.getByText('run me').evaluate((n) => n.closest('a')?.hasAttribute('href') ?? false)).toBe(
      false,
    );
    expect(await message.getByText('File (text/plain)').evaluate((n) => n.closest('a') === null)).toBe(true);
    // The page body is still shown (the <style> did not apply) and nothing was fetched from the other origin.
    expect(await page.evaluate(() => getComputedStyle(document.body).display)).not.toBe('none');
    expect(fetched).toEqual([]);
    expect(
      await page.evaluate(() => [
        localStorage.getItem('bubble.token'),
        sessionStorage.getItem('bubble.token') !== null,
      ]),
    ).toEqual([null, true]);
  });

  it('refuses to be framed by another origin', async () => {
    const { page, step } = browser;
    const framed = await browser.context.newPage();
    try {
      await framed.goto(`${otherUrl}/frame.html`);
      await framed.waitForTimeout(1_500);
      const frame = framed.frames().find((f) => f !== framed.mainFrame());
      // Blocked by frame-ancestors: Chromium puts its own error page in the frame instead of the app.
      expect(frame).toBeDefined();
      expect(frame!.url()).toBe('chrome-error://chromewebdata/');
      expect(
        await frame!
          .locator('[data-testid="me"]')
          .count()
          .catch(() => 0),
      ).toBe(0);
    } finally {
      await framed.close();
    }
    await step('page still fine', () => page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor());
  });
});
