import type { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser } from './support/browser.js';
import { say, shot, startWebWorld, type WebWorld } from './support/web-world.js';

/**
 * Messages and links that hurt other people (issue 28), in Debian's Chromium against the real
 * server: one message the renderer chokes on must not blank the thread for everyone.
 */
let world: WebWorld;
let browser: TestBrowser;
let you: { token: string; client: BubbleClient };
let bot: { token: string; client: BubbleClient };

beforeAll(async () => {
  world = await startWebWorld();
  you = await world.human('you', 'You');
  bot = await world.bot(you.client, 'helper', 'Helper');
  browser = await openBrowser('hostile');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

describe('a message the renderer could choke on', () => {
  it('60 KB of `>` and 60 KB of `_a` are drawn, and the messages after them too', async () => {
    const { page, step } = browser;
    const { thread } = await you.client.createThread({ title: 'Hostile markdown' });
    await you.client.addParticipant(thread.threadId, 'helper', 'member');
    const quotes = await say(bot.client, thread.threadId, '>'.repeat(60_000));
    const underscores = await say(bot.client, thread.threadId, '_a'.repeat(30_000));
    await say(bot.client, thread.threadId, 'Still here after **both**.');
    await step('open', () => page.goto(world.link(you.token, `/threads/${thread.threadId}`)));
    await step('the last message is shown', () => page.getByText('Still here after').waitFor());
    const quoted = page.locator(`article[data-run-id="${quotes}"]`);
    // Nested 16 deep (MAX_NESTING); the rest of the `>` are text in the innermost quote.
    expect(await quoted.locator('blockquote').count()).toBe(16);
    expect((await quoted.locator('.parts').textContent())?.length).toBeGreaterThan(59_000);
    const emphasis = page.locator(`article[data-run-id="${underscores}"] .parts`);
    expect(await emphasis.textContent()).toContain('_a_a_a');
    expect(await page.locator('[data-raw="true"]').count()).toBe(0);
    await page.getByText('Still here after').scrollIntoViewIfNeeded();
    await shot(page, 'hostile-markdown');
  });
});
