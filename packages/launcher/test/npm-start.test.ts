import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser, openSignInLink } from './support/browser.js';
import { scubaProcesses } from './support/launcher-process.js';

/**
 * `npm start`'s binary as a user runs it (no credentials, so the model
 * double): the printed link, the bot answering in the browser, Ctrl-C stopping
 * every process, a second start reusing everything, and the page reconnecting
 * by itself across that restart with no message missing or doubled.
 */
const here = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(here, '../bin/bubble-start.js');

interface Started {
  child: ChildProcess;
  stdout: () => string;
  link: string;
  exited: Promise<number | null>;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

/** Runs the binary with node, or through `npm start` itself from the repo root. */
async function start(port: number, dataDir: string, via: 'node' | 'npm' = 'node'): Promise<Started> {
  const args = ['--port', String(port), '--data', dataDir];
  const child =
    via === 'node'
      ? spawn(process.execPath, [BIN, ...args], {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn('npm', ['start', '--', ...args], {
          cwd: resolve(here, '../../..'),
          // npm wants a HOME; an empty one, so no Claude credentials are found there
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(dir, 'home') },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (!/^Sign in: .*$/m.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm start did not print a link:\n${out}\n${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const links = out.split('\n').filter((line) => line.includes('http://') && line.includes('#token='));
  expect(links).toHaveLength(1);
  return { child, stdout: () => out, link: /(http:\/\/\S+#token=\S+)/.exec(links[0]!)![1]!, exited };
}

let dir: string;
let browser: TestBrowser;
let running: Started | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-npm-start-'));
  browser = await openBrowser('npm-start');
});

afterAll(async () => {
  await browser?.close();
  if (running && running.child.exitCode === null) {
    running.child.kill('SIGTERM');
    await running.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('prints one link, the bot answers in the browser, Ctrl-C stops everything, a second start reuses it all, and the page reconnects without losing or doubling anything', async () => {
    const { page, step } = browser;
    const port = await freePort();
    const dataDir = join(dir, 'data');
    running = await start(port, dataDir);
    const first = running;
    expect(first.stdout()).toContain('offline model double');
    expect(first.link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/threads/th_[a-z0-9]+#token=bubble_user_`));

    await step('open link', () => openSignInLink(page, first.link));
    await step('welcome thread', () => page.getByText('I am not running on Claude right now').waitFor());
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill('hello before the restart');
    await composer.press('Enter');
    await step('bot answers', () =>
      page
        .locator('article[aria-label="Message from claude"][data-status="completed"]', {
          hasText: 'a scripted stand-in for the model',
        })
        .first()
        .waitFor({ timeout: 60_000 }),
    );
    await step('live', () => page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor());
    expect(scubaProcesses(dataDir).length).toBe(1);
    // The bot npm start runs is sandboxed, and only its owner ("you") approves its tools.
    const scubaLog = readFileSync(join(dataDir, 'launcher', 'claude-scuba.log'), 'utf8');
    expect(scubaLog).toContain("tools run in Claude Code's sandbox");
    const scubaConfig = JSON.parse(readFileSync(join(dataDir, 'launcher', 'scuba.json'), 'utf8'));
    expect(scubaConfig.approvals).toEqual({ approvers: 'bot_owners' });
    // The server's data folder (bubble.db, the launcher's state with both tokens) is out of the tools' reach.
    expect(scubaConfig.claude.privatePaths).toEqual([resolve(dataDir)]);

    // Ctrl-C: every process it started ends.
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    expect(scubaProcesses(dataDir)).toEqual([]);
    await step('page notices', () => page.getByTestId('live-state').filter({ hasText: 'Reconnecting…' }).waitFor());

    running = await start(port, dataDir);
    const second = running;
    expect(second.link).toBe(first.link);

    const token = /#token=(\S+)$/.exec(first.link)![1]!;
    const threadId = /\/threads\/([^#]+)#/.exec(first.link)![1]!;
    const you = new BubbleClient({ url: `http://127.0.0.1:${port}`, token });
    try {
      // Sent while the page is still away: it must arrive through the resubscription.
      const sent = await you.appendEvents(threadId, [
        { type: 'run_started', data: { runId: 'api-after-restart' } },
        { type: 'message_part', data: { runId: 'api-after-restart', chunk: { type: 'text-start', id: 't' } } },
        {
          type: 'message_part',
          data: {
            runId: 'api-after-restart',
            chunk: { type: 'text-delta', id: 't', delta: 'sent while the page was away' },
          },
        },
        { type: 'message_part', data: { runId: 'api-after-restart', chunk: { type: 'text-end', id: 't' } } },
        { type: 'run_finished', data: { runId: 'api-after-restart', status: 'completed' } },
      ]);
      await step('reconnected', () =>
        page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor({ timeout: 30_000 }),
      );
      await step('gap filled', () => page.getByText('sent while the page was away').waitFor());
      const sentSeq = sent.events[0]!.seq;
      const answersAfter = (events: EventEnvelope[]) =>
        events.filter(
          (e) =>
            e.principalId === 'claude' && e.type === 'run_finished' && e.data.status === 'completed' && e.seq > sentSeq,
        ).length;
      // The bot, restarted too, answers the message sent while everything restarted.
      const deadline = Date.now() + 60_000;
      let events: EventEnvelope[] = [];
      while (Date.now() < deadline) {
        events = (await you.readEvents(threadId, { after: 0, limit: 1000 })).events;
        if (answersAfter(events) >= 1) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(answersAfter(events)).toBe(1);
      const runIds = events.filter((e) => e.type === 'run_started').map((e) => e.data.runId as string);
      await step('every run shown once', async () => {
        await page.waitForFunction((n) => document.querySelectorAll('article.run').length >= n, runIds.length);
        const shown = await page
          .locator('article.run')
          .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-run-id')));
        expect(shown).toEqual(runIds);
      });
      // Reused: still one thread, one welcome note.
      expect((await you.listThreads()).map((t) => t.threadId)).toEqual([threadId]);
      expect(runIds.filter((id) => id.startsWith('launcher-note-')).length).toBe(1);
    } finally {
      you.close();
    }
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(scubaProcesses(dataDir)).toEqual([]);
  }, 180_000);

  it('stops everything it started when npm itself is sent SIGTERM (npm does not pass it through its shell)', async () => {
    const port = await freePort();
    const dataDir = join(dir, 'data-via-npm');
    mkdirSync(join(dir, 'home'), { recursive: true });
    running = await start(port, dataDir, 'npm');
    expect(scubaProcesses(dataDir).length).toBe(1);
    running.child.kill('SIGTERM');
    await running.exited;
    const deadline = Date.now() + 20_000;
    let stopped = false;
    while (!stopped && Date.now() < deadline) {
      const listening = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => true,
        () => false,
      );
      stopped = !listening && scubaProcesses(dataDir).length === 0;
      if (!stopped) await new Promise((r) => setTimeout(r, 100));
    }
    expect(stopped).toBe(true);
  }, 90_000);
});
