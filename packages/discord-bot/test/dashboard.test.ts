import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser } from '../../launcher/test/support/browser.js';
import {
  startDashboard,
  type Dashboard,
  type DashboardRun,
  type DashboardSource,
} from '../src/dashboard/dashboard-server.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Gitignored (`test-results/` in the root .gitignore). */
const SHOTS = resolve(here, '../../../test-results/dashboard');
const TOKEN = 'dashboard-browser-test-token-5f0c2a';
const HOSTILE = '<img src=x onerror=alert(1)>';

/** The bot's queue, in memory: abort removes a run and moves the queue up. */
class FakeSource implements DashboardSource {
  readonly aborted: string[] = [];
  /** Makes the next abort find nothing, as when the run ends just before the click lands. */
  finishedBeforeAbort = false;

  #list: DashboardRun[];

  constructor(list: DashboardRun[]) {
    this.#list = list;
  }

  runs(): DashboardRun[] {
    let position = 0;
    return this.#list.map((run) => (run.state === 'queued' ? { ...run, position: ++position } : run));
  }

  abort(id: string): boolean {
    this.aborted.push(id);
    if (this.finishedBeforeAbort) {
      this.finishedBeforeAbort = false;
      return false;
    }
    return this.finish(id);
  }

  /** A run ending by itself, as when Claude finishes. */
  finish(id: string): boolean {
    const before = this.#list.length;
    this.#list = this.#list.filter((run) => run.id !== id);
    return this.#list.length < before;
  }
}

describe('dashboard in Chromium', () => {
  let browser: TestBrowser;
  let dashboard: Dashboard;
  let source: FakeSource;
  const dialogs: Array<{ type: string; message: string }> = [];
  const now = Date.now();

  beforeAll(async () => {
    source = new FakeSource([
      {
        id: 'run-running',
        threadId: '1311111111111111111',
        threadName: HOSTILE,
        guildId: '1200000000000000000',
        userId: '1099999999999999999',
        userName: 'alice "><b>bold</b>',
        mode: 'agentic',
        state: 'running',
        position: undefined,
        enqueuedAt: now - 75_000,
        startedAt: now - 42_000,
      },
      {
        id: 'run-queued',
        threadId: '1322222222222222222',
        threadName: undefined,
        guildId: undefined,
        userId: '1088888888888888888',
        userName: 'bob',
        mode: 'chat',
        state: 'queued',
        position: 1,
        enqueuedAt: now - 7_000,
        startedAt: undefined,
      },
    ]);
    dashboard = await startDashboard({
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      source,
      logger: pino({ level: 'silent' }),
      now: () => now,
    });
    browser = await openBrowser('dashboard');
    mkdirSync(SHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  it('signs in, lists runs with hostile names as text, aborts one, and shows the empty state', async () => {
    const { page, step } = browser;
    // Every dialog is recorded: the only one allowed is the Abort confirmation.
    let answer: 'accept' | 'dismiss' = 'dismiss';
    page.on('dialog', (dialog) => {
      dialogs.push({ type: dialog.type(), message: dialog.message() });
      void (answer === 'accept' ? dialog.accept() : dialog.dismiss());
    });
    const csp: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) csp.push(message.text());
    });

    await step('sign-in form', async () => {
      await page.goto(dashboard.url);
      await expect.poll(() => page.locator('input[type=password][name=token]').count()).toBe(1);
      expect(await page.locator('h1').textContent()).toBe('bubble-discord dashboard');
      await page.screenshot({ path: join(SHOTS, 'signin.png') });
    });

    await step('wrong token', async () => {
      await page.fill('input[name=token]', 'not-the-token');
      const [response] = await Promise.all([page.waitForResponse('**/login'), page.click('button[type=submit]')]);
      expect(response.status()).toBe(401);
      await page.locator('[role=alert]', { hasText: 'wrong token' }).waitFor();
      await page.screenshot({ path: join(SHOTS, 'signin-wrong.png') });
    });

    await step('right token', async () => {
      await page.fill('input[name=token]', TOKEN);
      await page.click('button[type=submit]');
      await page.locator('tr[data-run-id]').nth(1).waitFor();
    });

    await step('two runs, hostile names shown literally', async () => {
      const running = page.locator('tr[data-run-id="run-running"]');
      const queued = page.locator('tr[data-run-id="run-queued"]');
      expect(await running.locator('.thread').textContent()).toBe(HOSTILE);
      expect(await running.locator('.user').textContent()).toBe('alice "><b>bold</b>');
      expect(await running.locator('.pill').allTextContents()).toEqual(['agentic', 'running']);
      expect(await running.locator('td.since').textContent()).toBe('started 42 s ago');
      expect(await running.locator('td.since').getAttribute('title')).toMatch(/\d/);
      const link = running.locator('a.thread');
      expect(await link.getAttribute('href')).toBe(
        'https://discord.com/channels/1200000000000000000/1311111111111111111',
      );
      expect(await link.getAttribute('target')).toBe('_blank');
      expect(await link.getAttribute('rel')).toContain('noopener');
      expect(await queued.locator('.pill').allTextContents()).toEqual(['chat', 'queued #1']);
      expect(await queued.locator('.thread').textContent()).toBe('(unnamed thread)');
      expect(await queued.locator('a').count()).toBe(0);
      expect(await queued.locator('td.since').textContent()).toBe('queued 7 s ago');
      // Nothing from the names became markup.
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('main b').count()).toBe(0);
      await expect.poll(() => page.locator('#summary').textContent()).toMatch(/^1 running · 1 queued · updated/);
      await page.screenshot({ path: join(SHOTS, 'list.png') });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(SHOTS, 'list-dark.png') });
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 420, height: 700 });
      await page.screenshot({ path: join(SHOTS, 'list-narrow.png') });
      await page.setViewportSize({ width: 1200, height: 800 });
    });

    await step('dismissing the confirmation aborts nothing', async () => {
      answer = 'dismiss';
      await page.locator('tr[data-run-id="run-queued"] button.abort').click();
      await expect.poll(() => dialogs.length).toBe(1);
      expect(dialogs[0]).toEqual({
        type: 'confirm',
        message: 'Abort the queued run (#1) in "1322222222222222222" for bob?',
      });
      // Give a stray request time to arrive before checking none did.
      await page.waitForTimeout(300);
      expect(source.aborted).toEqual([]);
    });

    await step('abort the running run', async () => {
      answer = 'accept';
      await page.locator('tr[data-run-id="run-running"] button.abort').click();
      await page.locator('tr[data-run-id="run-running"]').waitFor({ state: 'detached' });
      expect(source.aborted).toEqual(['run-running']);
      expect(dialogs[1]).toEqual({
        type: 'confirm',
        message: `Abort the running run in "${HOSTILE}" for alice "><b>bold</b>?`,
      });
      await page.locator('#notice.ok', { hasText: `Aborted the run in "${HOSTILE}".` }).waitFor();
      expect(await page.locator('tr[data-run-id]').count()).toBe(1);
    });

    await step('an abort that finds the run already finished says so', async () => {
      source.finishedBeforeAbort = true;
      await page.locator('tr[data-run-id="run-queued"] button.abort').click();
      await page
        .locator('#notice.info', { hasText: 'The run in "1322222222222222222" had already finished.' })
        .waitFor();
      expect(source.aborted).toEqual(['run-running', 'run-queued']);
      await page.screenshot({ path: join(SHOTS, 'already-finished.png') });
    });

    await step('empty state once the last run finishes', async () => {
      source.finish('run-queued');
      await page.locator('td.empty', { hasText: 'No runs right now' }).waitFor();
      expect(await page.locator('tr[data-run-id]').count()).toBe(0);
      await page.screenshot({ path: join(SHOTS, 'empty.png') });
    });

    await step('sign out', async () => {
      await page.click('#signout');
      await page.locator('input[name=token]').waitFor();
      await page.screenshot({ path: join(SHOTS, 'signed-out.png') });
    });

    expect(dialogs.map((d) => d.type)).toEqual(['confirm', 'confirm', 'confirm']);
    expect(csp).toEqual([]);
  });
});
