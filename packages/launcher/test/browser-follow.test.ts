import type { BubbleClient } from '@bubble/sdk';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser, openSignInLink } from './support/browser.js';
import {
  askApproval,
  fill,
  say,
  scrollState,
  shot,
  startStream,
  startWebWorld,
  type WebWorld,
} from './support/web-world.js';

/**
 * The conversation follows (issue [web-ui], item 2), in Debian's Chromium against the real
 * server: it stays at the bottom while you are there, whatever grows under you; it shows how
 * to get back when you are not; your own message is always brought into view; it opens at the
 * newest message or at your first unread one; a long thread reads older pages as you scroll up,
 * and what you were reading stays where it was.
 */
let world: WebWorld;
let browser: TestBrowser;
let you: { token: string; client: BubbleClient };
let bot: { token: string; client: BubbleClient };

const log = (page: Page) => page.locator('[role="log"][aria-label="Messages"]');
const composer = (page: Page) => page.getByRole('textbox', { name: 'Message' });

async function newThread(title: string): Promise<string> {
  const { thread } = await you.client.createThread({ title });
  await you.client.addParticipant(thread.threadId, 'helper', 'member');
  return thread.threadId;
}

async function open(threadId: string, title: string): Promise<void> {
  const { page, step } = browser;
  await step(`open ${title}`, () => openSignInLink(page, world.link(you.token, `/threads/${threadId}`)));
  await step(`${title} shown`, () => page.getByRole('heading', { name: title }).waitFor());
  await step(`${title} loaded`, () => log(page).and(page.locator('[aria-busy="false"]')).waitFor());
}

/** Whether the element is wholly inside the conversation's visible box. */
async function inView(page: Page, target: Locator): Promise<boolean> {
  const [box, frame] = await Promise.all([target.boundingBox(), log(page).boundingBox()]);
  if (box === null || frame === null) return false;
  return box.y >= frame.y - 1 && box.y + box.height <= frame.y + frame.height + 1;
}

async function atBottom(page: Page): Promise<void> {
  await expect.poll(async () => (await scrollState(page)).fromBottom, { timeout: 5_000 }).toBeLessThanOrEqual(2);
}

beforeAll(async () => {
  world = await startWebWorld();
  you = await world.human('you', 'You');
  bot = await world.bot(you.client, 'helper', 'Helper');
  browser = await openBrowser('follow');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

describe.each([
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
])('the conversation at $width px', ({ width, height }) => {
  let threadId: string;
  const title = `Follow ${width}`;

  beforeAll(async () => {
    await browser.page.setViewportSize({ width, height });
    threadId = await newThread(title);
    await fill([bot.client, you.client], threadId, 40, (n) => `Message number ${n}: ${'some words '.repeat(8)}`);
  });

  it('opens at the newest message', async () => {
    const { page } = browser;
    await open(threadId, title);
    await atBottom(page);
    expect(await inView(page, page.getByText('Message number 39:'))).toBe(true);
    await shot(page, `follow-open-newest-${width}`);
  });

  it('stays at the bottom while a reply streams in, and while an approval card appears under it', async () => {
    const { page, step } = browser;
    // Which messages the page touches while one streams: only that one (times that tick are not messages).
    await page.evaluate(() => {
      const w = window as unknown as { __touched: Set<string> };
      w.__touched = new Set();
      new MutationObserver((records) => {
        for (const record of records) {
          const node = record.target instanceof Element ? record.target : record.target.parentElement;
          if (node === null || node.closest('time') !== null) continue;
          const id = node.closest('article[data-run-id]')?.getAttribute('data-run-id');
          if (id) w.__touched.add(id);
        }
      }).observe(document.querySelector('[role="log"]')!, {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true,
      });
    });
    const stream = await startStream(bot.client, threadId);
    for (let n = 0; n < 60; n++) {
      await stream.write(`word${n} `);
      if (n % 10 === 9) await page.waitForTimeout(30);
    }
    await step('streamed', () => page.getByText('word59').waitFor());
    await atBottom(page);
    expect(await page.evaluate(() => [...(window as unknown as { __touched: Set<string> }).__touched])).toEqual([
      stream.runId,
    ]);
    // A long code block lays out under the reader, too.
    await stream.write(
      `\n\n\`\`\`js\n${Array.from({ length: 30 }, (_, i) => `const line${i} = ${i};`).join('\n')}\n\`\`\`\n`,
    );
    await stream.finish();
    await step('code block', () => page.getByText('const line29 = 29;').waitFor());
    await atBottom(page);
    await askApproval(bot.client, threadId, {
      toolCallId: `call-${width}`,
      command: 'rm -rf build',
      approvers: ['you'],
      preface: 'I would like to clean the build folder first.',
    });
    const approve = page.getByRole('button', { name: 'Approve' });
    await step('approval card', () => approve.waitFor());
    await atBottom(page);
    expect(await inView(page, approve)).toBe(true);
    await shot(page, `follow-approval-${width}`);
    // Answering it, and the bot going on, keep the view at the bottom.
    await step('approve', () => approve.click());
    await step('answered', () => page.getByText('Approved by You').waitFor());
    await say(bot.client, threadId, 'Done: the build folder is clean.');
    await step('bot goes on', () => page.getByText('Done: the build folder is clean.').waitFor());
    await atBottom(page);
  });

  it('says "new messages" when you are scrolled up, and goes back down when asked', async () => {
    const { page, step } = browser;
    await log(page).evaluate((el) => el.scrollTo({ top: el.scrollHeight / 2 }));
    await step('jump offered', () => page.getByTestId('jump-latest').filter({ hasText: 'Jump to latest' }).waitFor());
    const before = (await scrollState(page)).scrollTop;
    await say(bot.client, threadId, 'A message while you were reading above.');
    await step('new messages', () => page.getByRole('button', { name: '1 new message ↓' }).waitFor());
    // The reader's place is kept.
    expect(Math.abs((await scrollState(page)).scrollTop - before)).toBeLessThanOrEqual(2);
    await shot(page, `follow-new-messages-${width}`);
    await step('jump', () => page.getByRole('button', { name: '1 new message ↓' }).click());
    await atBottom(page);
    await step('button gone', () => page.getByTestId('jump-latest').waitFor({ state: 'detached' }));
    expect(await inView(page, page.getByText('A message while you were reading above.'))).toBe(true);
  });

  it('brings your own message into view when you send while scrolled up', async () => {
    const { page, step } = browser;
    await log(page).evaluate((el) => el.scrollTo({ top: 0 }));
    await expect.poll(async () => (await scrollState(page)).fromBottom).toBeGreaterThan(500);
    await composer(page).fill(`My own message at ${width}`);
    await composer(page).press('Enter');
    const mine = page.locator('article.run.mine', { hasText: `My own message at ${width}` });
    await step('sent', () => mine.waitFor());
    await atBottom(page);
    expect(await inView(page, mine)).toBe(true);
    // The bot's answer, with an approval card, lands under it and is followed too.
    await askApproval(bot.client, threadId, {
      toolCallId: `call-after-send-${width}`,
      command: 'npm test',
      approvers: ['you'],
      preface: `${'A long explanation before the question. '.repeat(20)}`,
    });
    const card = page.locator(`details[data-tool-call-id="call-after-send-${width}"]`);
    await step('card after send', () => card.getByRole('button', { name: 'Approve' }).waitFor());
    await atBottom(page);
    expect(await inView(page, card.getByRole('button', { name: 'Approve' }))).toBe(true);
    await shot(page, `follow-own-send-${width}`);
  });

  it('opens at your first unread message', async () => {
    const { page, step } = browser;
    // Leave the thread, let others write, come back.
    await step('leave', () => page.locator('header a[href="/"]:visible').first().click());
    const head = (await you.client.getThread(threadId)).headSeq;
    await expect.poll(() => you.client.getCursor(threadId)).toBe(head);
    await fill([bot.client], threadId, 30, (n) => `Unread reply ${n}: ${'more words here '.repeat(6)}`);
    await open(threadId, title);
    const divider = page.getByRole('separator', { name: 'New messages since you last read' });
    await step('divider', () => divider.waitFor());
    expect(await inView(page, divider)).toBe(true);
    expect(await inView(page, page.getByText('Unread reply 0:'))).toBe(true);
    // Opened there, not at the bottom: the newest is below, offered by the jump button.
    expect((await scrollState(page)).fromBottom).toBeGreaterThan(100);
    expect(await inView(page, page.getByText('Unread reply 29:'))).toBe(false);
    await step('jump offered', () => page.getByTestId('jump-latest').waitFor());
    await shot(page, `follow-first-unread-${width}`);
  });
});

describe('a long thread', () => {
  let threadId: string;
  const title = 'Long history';

  beforeAll(async () => {
    await browser.page.setViewportSize({ width: 1280, height: 800 });
    threadId = await newThread(title);
    // 400 messages: 2,000 events and more.
    await fill([bot.client, you.client], threadId, 400, (n) => `History ${n}: ${'words '.repeat(10)}`);
  }, 60_000);

  it('reads the newest page first, then older pages as you scroll up, keeping your place', async () => {
    const { page, step } = browser;
    await open(threadId, title);
    await atBottom(page);
    const shown = await page.locator('article.run').count();
    expect(shown).toBeGreaterThan(10);
    expect(shown).toBeLessThan(400);
    await step('older offered', () => page.getByText('Scroll up for older messages').waitFor());
    // Scrolled to the top: the first message shown stays exactly where it was once older ones are put above it.
    const firstShown = page.locator('article.run').first();
    const id = await firstShown.getAttribute('data-run-id');
    // Both positions are read as a frame would paint them: `before` in the same task as the scroll,
    // `after` past two animation frames, never between a page's commit and the layout pass that
    // puts the reader back (which happen before one paint, so no one sees that moment).
    const before = await log(page).evaluate((el, runId) => {
      el.scrollTo({ top: 0 });
      return el.querySelector(`article[data-run-id="${runId}"]`)!.getBoundingClientRect().top;
    }, id);
    await expect.poll(() => page.locator('article.run').count(), { timeout: 10_000 }).toBeGreaterThan(shown);
    const after = await log(page).evaluate(
      (el, runId) =>
        new Promise<number>((resolve) =>
          requestAnimationFrame(() =>
            requestAnimationFrame(() =>
              resolve(el.querySelector(`article[data-run-id="${runId}"]`)!.getBoundingClientRect().top),
            ),
          ),
        ),
      id,
    );
    expect(Math.abs(after - before)).toBeLessThanOrEqual(2);
    await shot(page, 'follow-older-page-1280');
    // All the way up: every message, in order, once.
    for (let i = 0; i < 40; i++) {
      if ((await page.getByText('History 0:').count()) > 0) break;
      await log(page).evaluate((el) => el.scrollTo({ top: 0 }));
      await page.waitForTimeout(150);
    }
    await step('start of the thread', () => page.getByText('History 0:').waitFor());
    const texts = await page.locator('article.run .markdown').allTextContents();
    const numbers = texts.map((t) => Number(/History (\d+):/.exec(t)?.[1] ?? -1)).filter((n) => n >= 0);
    expect(numbers).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(await page.getByText('Scroll up for older messages').count()).toBe(0);
  }, 60_000);
});
