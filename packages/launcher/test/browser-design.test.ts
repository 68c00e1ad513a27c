import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BubbleClient } from '@bubble/sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, SCREENSHOT_DIR, type TestBrowser, openSignInLink } from './support/browser.js';
import { startDesignWorld, type DesignWorld } from './support/design-world.js';

/**
 * The look and feel (design.md), in Debian's Chromium against the real server and the built
 * app, on a thread with one of everything (support/design-world.ts): the theme toggle and
 * `prefers-color-scheme`, avatars and grouping, times, markdown as GitHub draws it (and still
 * sanitized), tool calls that read as sentences, denied / failed / stopped / waiting each
 * distinct, and a phone's width. `BUBBLE_DESIGN_SHOTS=/tmp/shots` saves the screenshots there
 * (`design-*.png`, light and dark, 1280 and 390 px) for a person to look at.
 */
const SHOTS = process.env.BUBBLE_DESIGN_SHOTS ?? join(SCREENSHOT_DIR, 'design');
/** The page's clock, a few minutes after the thread was written: times read "3 minutes ago". */
const LATER_MS = 3 * 60_000;

let world: DesignWorld;
let browser: TestBrowser;

beforeAll(async () => {
  world = await startDesignWorld();
  browser = await openBrowser('design');
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.url });
  await browser.page.clock.setFixedTime(Date.now() + LATER_MS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

const message = (page: Page, text: string) => page.locator('article.run', { hasText: text });
const call = (page: Page, id: string) => page.locator(`details[data-tool-call-id="${id}"]`);
const summaryOf = async (page: Page, id: string) =>
  ((await call(page, id).locator('summary').first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

/** Screenshots of what is on screen; a tall page is cut into screen-sized pictures. */
async function shoot(page: Page, name: string, options: { scheme: 'light' | 'dark'; width: number; height?: number }) {
  mkdirSync(SHOTS, { recursive: true });
  const height = options.height ?? (options.width < 600 ? 844 : 800);
  await page.emulateMedia({ colorScheme: options.scheme });
  await page.setViewportSize({ width: options.width, height });
  await page.waitForTimeout(150);
  await page.screenshot({
    path: join(SHOTS, `design-${name}-${options.width}-${options.scheme}.png`),
    animations: 'disabled',
    caret: 'initial',
  });
}

/** The whole conversation, one screen at a time (the timeline scrolls inside the page). */
async function shootConversation(page: Page, name: string, scheme: 'light' | 'dark', width: number) {
  const height = width < 600 ? 844 : 800;
  await page.emulateMedia({ colorScheme: scheme });
  await page.setViewportSize({ width, height });
  const timeline = page.locator('.timeline');
  const total = await timeline.evaluate((el) => el.scrollHeight - el.clientHeight);
  const step = Math.round(height * 0.75);
  for (let top = 0, n = 1; n <= 8; top += step, n++) {
    await timeline.evaluate((el, y) => {
      el.scrollTop = y;
    }, top);
    await shoot(page, `${name}-${n}`, { scheme, width });
    if (top >= total) break;
  }
}

describe('the design, in Chromium', () => {
  it('draws the conversation: avatars, groups, times, markdown, runs that stream, stop and fail', async () => {
    const { page, step } = browser;
    await step('open', () => openSignInLink(page, world.aliceLink));
    await step('thread', () => page.getByText('Understood, I left').waitFor());

    // Avatars: initials on a colour from the id; round for people, square for bots, and a badge.
    const alice = message(page, 'Can you add a dark mode toggle');
    const claude = message(page, 'Here is the plan');
    const human = await alice.locator('.avatar').evaluate((el) => {
      const s = getComputedStyle(el);
      return [el.textContent, s.width, s.borderTopLeftRadius, s.color];
    });
    expect(human).toEqual(['AL', '32px', '50%', 'rgb(255, 255, 255)']);
    expect(await claude.locator('.avatar').evaluate((el) => getComputedStyle(el).borderTopLeftRadius)).toBe('8px');
    expect(await claude.locator('header .bot-badge').textContent()).toBe('bot');

    // Alice's two messages share one header; Bob's next message starts its own.
    const second = message(page, 'It should remember the choice');
    expect(await second.getAttribute('class')).toContain('continued');
    expect(await second.locator('header').count()).toBe(0);
    expect(await message(page, 'clear out the old build folder').locator('header').count()).toBe(1);

    // Times are relative, with the exact time on hover.
    const time = alice.locator('header time');
    expect(await time.textContent()).toBe('3 minutes ago');
    expect(await time.getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await time.getAttribute('title')).toMatch(/\d{4}/);

    // Markdown as GitHub draws it.
    const table = claude.locator('table');
    expect(
      await table
        .locator('td')
        .first()
        .evaluate((el) => getComputedStyle(el).borderTopWidth),
    ).toBe('1px');
    expect(
      await claude
        .locator('ul')
        .first()
        .evaluate((el) => getComputedStyle(el).listStyleType),
    ).toBe('disc');
    expect(
      await claude
        .locator('ol')
        .first()
        .evaluate((el) => getComputedStyle(el).listStyleType),
    ).toBe('decimal');
    expect(await claude.locator('blockquote').count()).toBe(1);
    const code = claude.locator('.code-block');
    expect(await code.locator('.code-lang').textContent()).toBe('ts');
    expect(await code.locator('pre code.hljs.language-ts .hljs-keyword').first().textContent()).toBe('export');
    await step('copy', () => code.getByRole('button', { name: 'Copy code' }).click());
    await step('copied', () => code.getByRole('button', { name: 'Copied' }).waitFor());
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('export function applyTheme');
    const link = claude.getByRole('link', { name: 'the MDN page' });
    expect([await link.getAttribute('target'), await link.getAttribute('rel')]).toEqual([
      '_blank',
      'noopener noreferrer',
    ]);

    // A run that streams shows a caret; a stopped one says who stopped it; an error says what to do.
    const scout = page.locator('article[data-author="scout"]');
    expect(await scout.getAttribute('data-status')).toBe('streaming');
    expect(
      await scout
        .locator('.markdown.streaming p')
        .last()
        .evaluate((el) => getComputedStyle(el, '::after').content),
    ).toBe('""');
    expect(await page.locator('article[data-status="interrupted"] .run-stopped').textContent()).toBe(
      'Stopped by Alice Liddell',
    );
    const failed = page.locator('article[data-status="error"]');
    expect(await failed.locator('.run-error > p').textContent()).toBe(
      "The bot's Claude usage limit is reached. Ask again in 2 hours.",
    );
    expect(await failed.locator('details.run-error-detail').getAttribute('open')).toBeNull();
  });

  it('reads tool calls as sentences, with inputs and outputs formatted for what they are', async () => {
    const { page, step } = browser;
    expect(await summaryOf(page, 'toolu_read')).toBe('Read src/settings.tsx Done');
    expect(await summaryOf(page, 'toolu_grep')).toBe('Searched for prefers-color-scheme in src (2 files) Done');
    expect(await summaryOf(page, 'toolu_edit')).toBe('Edited src/settings.tsx (+4 −0) Done');
    expect(await summaryOf(page, 'toolu_test')).toBe('Ran npm test Done');
    expect(await summaryOf(page, 'toolu_rm')).toBe('Did not run rm -rf build Denied');
    expect(await summaryOf(page, 'toolu_agent')).toBe('Asked a helper: Review the toggle for accessibility Done');
    expect(await summaryOf(page, 'toolu_art')).toBe('Wrote artifact plan.md (version 1) Done');
    expect(await summaryOf(page, 'toolu_build')).toMatch(
      /^Asks to run npm run build && npx lighthouse .*Needs your approval$/,
    );

    // An edit shows its diff (small ones open by themselves).
    const edit = call(page, 'toolu_edit');
    expect(await edit.getAttribute('open')).not.toBeNull();
    expect(await edit.locator('ins.diff-add').count()).toBe(4);
    expect(await edit.locator('del.diff-del').count()).toBe(0);
    expect(await edit.locator('.diff-head code').textContent()).toBe('src/settings.tsx');

    // Open everything: nothing the CLI wrote for the model shows, and no raw JSON comes first.
    await step('open all', () =>
      page.evaluate(() => {
        document.querySelectorAll<HTMLDetailsElement>('details.tool').forEach((d) => {
          d.open = true;
        });
      }),
    );
    const text = (await page.locator('.timeline').textContent()) ?? '';
    for (const internal of ['system-reminder', 'agentId', 'Subagent hand-back', '<usage>', 'tools-used-before-summary'])
      expect(text).not.toContain(internal);
    const firsts = await page
      .locator('details.tool > .tool-body')
      .evaluateAll((bodies) => bodies.map((b) => (b.firstElementChild?.textContent ?? '').trim()));
    for (const first of firsts) expect(first.startsWith('{')).toBe(false);

    // A command, its output folded when long; a read with line numbers; the helper's report alone.
    const test = call(page, 'toolu_test');
    expect(await test.locator('.tool-input').textContent()).toBe('$ npm test');
    await step('show all', () => test.getByRole('button', { name: /^Show all \d+ lines$/ }).click());
    expect(await test.locator('.tool-output').textContent()).toContain('Tests  42 passed (42)');
    expect(await call(page, 'toolu_read').locator('.gutter').textContent()).toMatch(/^1\n2\n3/);
    expect((await call(page, 'toolu_agent').locator('.tool-report').textContent())?.trim()).toBe(
      'The toggle is reachable by keyboard and has a visible focus ring.One problem: the legend is missing a for target on phones.',
    );
    expect(await call(page, 'toolu_agent').getByRole('link', { name: "Open the sub-agent's subthread" }).count()).toBe(
      1,
    );

    // The raw call is there for whoever needs it, behind its own fold.
    const raw = call(page, 'toolu_test').locator('details.tool-raw');
    await step('raw', () => raw.locator('summary').click());
    expect(JSON.parse((await raw.locator('pre').textContent()) ?? '')).toMatchObject({
      tool: 'Bash',
      input: { command: 'npm test' },
    });

    // A denial says who and why, once, and never "failed".
    const denied = call(page, 'toolu_rm');
    expect(await denied.locator('p.approval').textContent()).toBe('Denied by Alice Liddell: not on the shared machine');
    expect(text.split('not on the shared machine').length - 1).toBe(1);
    expect((await denied.textContent())?.toLowerCase()).not.toContain('fail');
    // Waiting for me: Approve and Deny; approved calls say who approved.
    const waiting = call(page, 'toolu_build');
    expect(await waiting.getAttribute('data-state')).toBe('waiting');
    expect(await waiting.getByRole('button', { name: 'Approve' }).count()).toBe(1);
    expect(await waiting.getByLabel('Reason to deny (optional)').count()).toBe(1);
    expect(await call(page, 'toolu_test').locator('p.approval').textContent()).toBe('Approved by Alice Liddell');
  });

  it('follows the system theme, and a toggle that is remembered', async () => {
    const { page, step } = browser;
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await background()).toBe('rgb(13, 17, 23)');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await background()).toBe('rgb(255, 255, 255)');
    const toggle = page.locator('.theme-toggle');
    expect(await toggle.getAttribute('data-theme-choice')).toBe('system');
    await step('light', () => toggle.click());
    await step('dark', () => toggle.click());
    expect(await toggle.getAttribute('data-theme-choice')).toBe('dark');
    expect(await background()).toBe('rgb(13, 17, 23)');
    await page.reload();
    await step('reloaded', () => page.getByText('Understood, I left').waitFor());
    expect(
      await page.evaluate(() => [document.documentElement.dataset.theme, localStorage.getItem('bubble.theme')]),
    ).toEqual(['dark', 'dark']);
    expect(await background()).toBe('rgb(13, 17, 23)');
    await step('system again', () => toggle.click());
    expect(await page.evaluate(() => localStorage.getItem('bubble.theme'))).toBeNull();
    expect(await background()).toBe('rgb(255, 255, 255)');
  });

  it('lays out a desktop in three columns and a phone in one, with a back control and 44 px targets', async () => {
    const { page, step } = browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.locator('.sidebar').evaluate((el) => el.getBoundingClientRect().width)).toBe(260);
    await step('people', () => page.getByRole('button', { name: /^People/ }).click());
    const panel = page.getByRole('complementary', { name: 'People on this thread' });
    await step('panel', () => panel.waitFor());
    expect(await panel.evaluate((el) => el.getBoundingClientRect().width)).toBe(300);
    await step('people closed', () => page.getByRole('button', { name: /^People/ }).click());

    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    const smallTargets = () =>
      page.evaluate(() =>
        Array.from(
          document.querySelectorAll<HTMLElement>(
            'button, summary, input:not([type="radio"], [type="checkbox"]), label:has(> input[type="radio"]), select, textarea, .topbar a, .thread-list a',
          ),
        )
          .filter((el) => el.offsetParent !== null && el.getBoundingClientRect().width > 0)
          .filter((el) => el.getBoundingClientRect().height < 44)
          .map((el) => `${el.tagName.toLowerCase()}.${el.className} "${(el.textContent ?? '').trim().slice(0, 30)}"`),
      );
    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(await smallTargets()).toEqual([]);
    const back = page.getByRole('link', { name: 'Threads' });
    await step('back', () => back.click());
    await step('list', () => page.getByRole('list', { name: 'Your threads' }).waitFor());
    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(await smallTargets()).toEqual([]);
    await step('bots', () =>
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bots' }).click(),
    );
    await step('bots page', () => page.getByRole('heading', { name: 'Your bots' }).waitFor());
    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(await smallTargets()).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('takes the screenshots a person reviews', async () => {
    const { page, step } = browser;
    for (const scheme of ['light', 'dark'] as const) {
      await step('thread', () => page.goto(`${world.url}/threads/${encodeURIComponent(world.threadId)}`));
      await step('thread shown', () => page.getByText('Understood, I left').waitFor());
      for (const width of [1280, 390]) await shootConversation(page, 'thread', scheme, width);
      await page.setViewportSize({ width: 1280, height: 800 });
      await step('open calls', () =>
        page.evaluate(() => {
          document.querySelectorAll<HTMLDetailsElement>('details.tool').forEach((d) => {
            d.open = true;
          });
        }),
      );
      for (const width of [1280, 390]) await shootConversation(page, 'tools-open', scheme, width);
      await page.setViewportSize({ width: 1280, height: 800 });
      await step('artifacts', () => page.getByRole('button', { name: 'Artifacts' }).click());
      await step('plan.md', () => page.getByRole('button', { name: 'plan.md' }).click());
      await step('plan', () => page.getByRole('heading', { name: 'Plan', exact: true }).waitFor());
      await shoot(page, 'artifacts', { scheme, width: 1280 });
      await step('people', () => page.getByRole('button', { name: /^People/ }).click());
      await shoot(page, 'people', { scheme, width: 1280 });
      await shoot(page, 'people', { scheme, width: 390 });
      await page.setViewportSize({ width: 1280, height: 800 });
      await step('subthread', () => page.goto(`${world.url}/threads/${encodeURIComponent(world.subthreadId)}`));
      await step('sub shown', () => page.getByText('The toggle is reachable by keyboard').waitFor());
      await shoot(page, 'subthread', { scheme, width: 1280 });
      await shoot(page, 'subthread', { scheme, width: 390 });
      await step('home', () => page.goto(`${world.url}/`));
      await step('list', () => page.getByRole('list', { name: 'Your threads' }).waitFor());
      await shoot(page, 'home', { scheme, width: 1280 });
      await shoot(page, 'thread-list', { scheme, width: 390 });
      await step('bots', () => page.goto(`${world.url}/bots`));
      await step('bots page', () => page.getByRole('article', { name: 'Bot claude' }).waitFor());
      await shoot(page, 'bots', { scheme, width: 1280 });
      await shoot(page, 'bots', { scheme, width: 390 });
      await step('tokens', () => page.goto(`${world.url}/tokens`));
      await step('tokens page', () => page.getByRole('heading', { name: 'Your sessions and tokens' }).waitFor());
      await shoot(page, 'tokens', { scheme, width: 1280 });
    }
    // Signed out: the sign-in page (then back in, for anything after this).
    await page.setViewportSize({ width: 1280, height: 800 });
    await step('sign out', () => page.getByRole('button', { name: 'Sign out' }).click());
    await step('sign-in page', () => page.getByRole('heading', { name: 'Sign in to Bubble' }).waitFor());
    for (const scheme of ['light', 'dark'] as const)
      for (const width of [1280, 390]) await shoot(page, 'sign-in', { scheme, width });
  }, 180_000);
  it('keeps sanitizing what a message draws', async () => {
    const { page, step } = browser;
    const alice = new BubbleClient({ url: world.url, token: world.aliceToken });
    const runId = 'hostile-design';
    try {
      await alice.appendEvents(world.threadId, [
        { type: 'run_started', data: { runId } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
        {
          type: 'message_part',
          data: {
            runId,
            chunk: {
              type: 'text-delta',
              id: 't',
              delta:
                'Hostile: [click](javascript:alert(1)) <img src=x onerror="alert(1)"> <a href="https://example.com" onclick="alert(1)">site</a> <span onmouseover="alert(1)">hover</span>\n\n```js" onclick="alert(1)\nx\n```',
            },
          },
        },
        { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
        { type: 'run_finished', data: { runId, status: 'completed' } },
      ]);
    } finally {
      alice.close();
    }
    await step('signed in again', () => openSignInLink(page, world.aliceLink));
    const hostile = page.locator(`article[data-run-id="${runId}"]`);
    await step('hostile shown', () => hostile.getByText('Hostile:').waitFor());
    expect(await hostile.locator('.parts img, .parts [onerror], .parts [onclick], .parts [onmouseover]').count()).toBe(
      0,
    );
    expect(await hostile.locator('.parts a[href^="javascript"]').count()).toBe(0);
    expect(await hostile.getByText('click').evaluate((n) => n.closest('a')?.hasAttribute('href') ?? false)).toBe(false);
    // Raw HTML is text (markdown-it with html off); the bare URL in it is linked, in a new tab.
    expect(await hostile.getByText('<a href=').count()).toBe(1);
    expect(await hostile.getByRole('link', { name: 'site' }).count()).toBe(0);
    expect(await hostile.getByRole('link', { name: 'https://example.com' }).getAttribute('rel')).toBe(
      'noopener noreferrer',
    );
    expect(await hostile.locator('.code-block code').getAttribute('class')).toBe('hljs');
  });
});
