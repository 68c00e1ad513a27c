import { BubbleClient } from '@bubble/sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser, openSignInLink } from './support/browser.js';
import { askApproval, say, shot, startWebWorld, type WebWorld } from './support/web-world.js';

/**
 * What waits for you is unmissable (issue [web-ui], item 3), in Debian's Chromium against the
 * real server: unread counts messages, not events; an approval waiting for you marks the thread
 * in the list and the tab's title; presence tells a stopped bot from a silent one, before you
 * write to it; each run's usage and cost, and the thread's total. Then the wording a person can
 * act on, and a bot token that is revoked only when asked twice.
 */
let world: WebWorld;
let browser: TestBrowser;
let you: { token: string; client: BubbleClient };
let bot: { token: string; client: BubbleClient };
let home: string;
let other: string;

/** The way home in the top bar, whichever the width shows (the brand, or the phone's back control). */
const homeLink = (page: Page) => page.locator('header a[href="/"]:visible').first();
const row = (page: Page, title: string) =>
  page.getByRole('list', { name: 'Your threads' }).getByRole('link', { name: new RegExp(title) });

beforeAll(async () => {
  world = await startWebWorld();
  you = await world.human('you', 'You');
  bot = await world.bot(you.client, 'helper', 'Helper');
  home = (await you.client.createThread({ title: 'Home' })).thread.threadId;
  other = (await you.client.createThread({ title: 'Other work' })).thread.threadId;
  await you.client.addParticipant(other, 'helper', 'member');
  await you.client.addParticipant(home, 'helper', 'member');
  browser = await openBrowser('signals');
  await openSignInLink(browser.page, world.link(you.token, `/threads/${home}`));
  await browser.page.getByRole('heading', { name: 'Home' }).waitFor();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

describe('signals', () => {
  it('counts unread messages, not events', async () => {
    const { page, step } = browser;
    // Three messages by the bot (15 events) and two custom events: three unread.
    await say(bot.client, other, 'First reply.');
    await bot.client.appendEvents(other, [
      { type: 'acme.note', data: { n: 1 } },
      { type: 'acme.note', data: { n: 2 } },
    ]);
    await say(bot.client, other, 'Second reply.');
    await say(bot.client, other, 'Third reply.');
    // A message of your own (from another tab, say) is not unread.
    await say(you.client, other, 'A note to myself.');
    await step('badge', () => row(page, 'Other work').getByLabel('3 unread').waitFor({ timeout: 15_000 }));
    const head = (await you.client.getThread(other)).headSeq;
    expect(head - (await you.client.getCursor(other))).toBeGreaterThan(15);
    await shot(page, 'follow-unread-badge-1280');
    // Reading them clears the badge.
    await step('read', () => row(page, 'Other work').click());
    await step('shown', () => page.getByText('Third reply.').waitFor());
    await step('home again', () => row(page, 'Home').click());
    await step('badge gone', () =>
      row(page, 'Other work')
        .getByLabel(/unread/)
        .waitFor({ state: 'detached', timeout: 15_000 }),
    );
  });

  it('marks a thread where an approval waits for you, in the list and in the tab title', async () => {
    const { page, step } = browser;
    // One for someone else first: nothing to mark.
    await askApproval(bot.client, other, { toolCallId: 'not-for-you', command: 'ls', approvers: ['someone-else'] });
    await page.waitForTimeout(5_000);
    expect(await row(page, 'Other work').getByTestId('approval-mark').count()).toBe(0);
    expect(await page.title()).toBe('Bubble');
    await askApproval(bot.client, other, { toolCallId: 'for-you', command: 'rm -rf build', approvers: ['you'] });
    await step('marked', () => row(page, 'Other work').getByText('Approval waiting').waitFor({ timeout: 15_000 }));
    await expect.poll(() => page.title()).toBe('(1) Approval waiting · Bubble');
    await shot(page, 'follow-approval-mark-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await step('home on a phone', () => homeLink(page).click());
      await step('marked on a phone', () => row(page, 'Other work').getByText('Approval waiting').waitFor());
      expect(await page.getByText('on the left').count()).toBe(0);
      await shot(page, 'follow-approval-mark-390');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    // Answered: the mark and the title go.
    await step('open it', () => row(page, 'Other work').click());
    const call = page.locator('details[data-tool-call-id="for-you"]');
    await step('approve', () => call.getByRole('button', { name: 'Approve' }).click());
    await step('answered', () => call.getByText('Approved by You').waitFor());
    await step('mark gone', () =>
      row(page, 'Other work').getByTestId('approval-mark').waitFor({ state: 'detached', timeout: 15_000 }),
    );
    await expect.poll(() => page.title(), { timeout: 15_000 }).toBe('Bubble');
  });

  it("shows each run's usage and cost, and the thread's total", async () => {
    const { page, step } = browser;
    await say(bot.client, other, 'An answer that cost something.', {
      inputTokens: 1000,
      cacheReadInputTokens: 200,
      outputTokens: 340,
      costUsd: 0.0123,
    });
    await say(bot.client, other, 'Another one.', { inputTokens: 800, outputTokens: 60, costUsd: 0.02 });
    const first = page.locator('article.run', { hasText: 'An answer that cost something.' });
    await step('first answer', () => first.waitFor());
    await step('usage line', () =>
      page.getByTestId('run-usage').filter({ hasText: '1.2k in · 340 out · $0.01' }).waitFor(),
    );
    await step('second usage', () =>
      page.getByTestId('run-usage').filter({ hasText: '800 in · 60 out · $0.02' }).waitFor(),
    );
    expect(await page.getByTestId('thread-usage').textContent()).toBe('2.0k in · 400 out · $0.03');
    await shot(page, 'follow-usage-1280');
  });

  it('tells a stopped bot from a silent one, before you write to it', async () => {
    const { page, step } = browser;
    await step('people', () => page.getByRole('button', { name: /^People/ }).click());
    const dot = page.locator('.panel [data-principal-id="helper"] [data-testid="presence"]');
    // The bot has no socket open: offline, said in the composer before anyone writes.
    await step('offline', () => dot.and(page.locator('[data-online="false"]')).waitFor());
    await step('composer says so', () =>
      page.getByTestId('bot-offline').filter({ hasText: 'Helper is offline' }).waitFor(),
    );
    await shot(page, 'follow-bot-offline-1280');
    // The bot starts: a socket of its own, subscribed as a bot is.
    const running = new BubbleClient({ url: world.url, token: bot.token });
    const controller = new AbortController();
    const listening = (async () => {
      for await (const _event of running.subscribeThread(other, { afterSeq: 0, signal: controller.signal })) {
        // a bot reads its threads
      }
    })().catch(() => undefined);
    await step('online', () => dot.and(page.locator('[data-online="true"]')).waitFor({ timeout: 15_000 }));
    await step('composer quiet', () => page.getByTestId('bot-offline').waitFor({ state: 'detached' }));
    await shot(page, 'follow-bot-online-1280');
    // The bot stops.
    controller.abort();
    running.close();
    await listening;
    await step('offline again', () => dot.and(page.locator('[data-online="false"]')).waitFor({ timeout: 15_000 }));
    await step('composer says so again', () => page.getByTestId('bot-offline').waitFor());
  });
});

describe('wording and safety', () => {
  it("says what to do when the server can't be reached, and clears a failed send once it is resent", async () => {
    const { page, step } = browser;
    await step('open home', () => row(page, 'Home').click());
    await page.route('**/v1/threads/*/events', (route) =>
      route.request().method() === 'POST' ? route.abort('connectionrefused') : route.fallback(),
    );
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill('Hello while the server is away');
    await composer.press('Enter');
    const failure = page.locator('.send-failure');
    await step('not sent', () => failure.waitFor({ timeout: 30_000 }));
    const text = (await failure.textContent()) ?? '';
    expect(text).toContain(`can't reach the Bubble server at ${world.url}`);
    expect(text).not.toContain('Failed to fetch');
    expect(await composer.inputValue()).toBe('Hello while the server is away');
    await shot(page, 'follow-send-failed-1280');
    await page.unroute('**/v1/threads/*/events');
    await step('resend', () => page.getByRole('button', { name: 'Send' }).click());
    await step('sent', () => page.locator('article.run.mine', { hasText: 'Hello while the server is away' }).waitFor());
    await step('banner gone', () => failure.waitFor({ state: 'detached' }));
    expect(await page.getByRole('alert').count()).toBe(0);

    // The thread list, when the server is away: where it looked, and that it keeps trying.
    await page.route('**/v1/threads', (route) => route.abort('connectionrefused'));
    const listError = page.locator('.thread-list .error');
    await step('list error', () => listError.waitFor({ timeout: 30_000 }));
    expect(await listError.textContent()).toBe(
      `Could not load your threads: can't reach the Bubble server at ${world.url}. Is it running? Retrying…`,
    );
    await page.unroute('**/v1/threads');
    await step('list back', () => listError.waitFor({ state: 'detached', timeout: 15_000 }));
  });

  it("asks before revoking a bot's token, and revokes only on yes", async () => {
    const { page, step } = browser;
    await step('bots', () =>
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bots' }).click(),
    );
    const card = page.getByRole('article', { name: 'Bot helper' });
    await step('card', () => card.getByRole('button', { name: /^Revoke tok_/ }).waitFor());
    await step('revoke', () => card.getByRole('button', { name: /^Revoke tok_/ }).click());
    const question = card.getByRole('group', { name: /^Revoke tok_.*\?$/ });
    await step('asked', () => question.waitFor());
    expect(await question.textContent()).toContain('Whatever runs as helper with it is signed out at once');
    // Nothing happened yet; Cancel (in focus: Enter is the safe answer) keeps the token.
    expect((await bot.client.whoami()).principalId).toBe('helper');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await shot(page, 'follow-revoke-confirm-1280');
    await page.keyboard.press('Enter');
    await step('cancelled', () => question.waitFor({ state: 'detached' }));
    expect((await bot.client.whoami()).principalId).toBe('helper');
    // Yes revokes it, at once.
    await step('revoke again', () => card.getByRole('button', { name: /^Revoke tok_/ }).click());
    await step('yes', () => card.getByRole('button', { name: 'Yes, revoke it' }).click());
    await step('revoked', () => card.getByText(/^Revoked tok_/).waitFor());
    const revoked = new BubbleClient({ url: world.url, token: bot.token, retry: false });
    await expect(revoked.whoami()).rejects.toMatchObject({ code: 'unauthorized' });
    revoked.close();
  });
});
