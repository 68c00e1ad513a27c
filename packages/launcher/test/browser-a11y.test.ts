import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BubbleClient } from '@bubble/sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser, openSignInLink } from './support/browser.js';
import { askApproval, say, shot, startWebWorld, type WebWorld } from './support/web-world.js';

/**
 * Accessibility, in Debian's Chromium against the real server: axe-core (the standard engine)
 * on every screen, at a desktop's and a phone's width, with no serious or critical violation;
 * and the one action that waits on a person, Approve, done by keyboard alone.
 */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/** axe on the page as it is: the engine is evaluated through the DevTools protocol, which the page's CSP does not govern. */
async function axe(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    (
      window as unknown as { axe: { run: (ctx: Document, opts: unknown) => Promise<{ violations: Violation[] }> } }
    ).axe.run(document, { resultTypes: ['violations'] }),
  );
  // Every violation, serious or not, is printed: the milder ones are worth reading too.
  console.log(
    `axe ${new URL(page.url()).pathname} @${page.viewportSize()?.width}px: ${result.violations.length} violation(s)${result.violations.map((v) => ` ${v.impact}:${v.id}(${v.nodes.length})`).join('')}`,
  );
  return result.violations;
}

function serious(violations: Violation[]): string[] {
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help}\n${v.nodes
          .slice(0, 5)
          .map((n) => `  ${JSON.stringify(n.target)} ${n.failureSummary?.split('\n').slice(1, 2).join('') ?? ''}`)
          .join('\n')}`,
    );
}

let world: WebWorld;
let browser: TestBrowser;
let you: { token: string; client: BubbleClient };
let threadId: string;
let invitePath: string;

beforeAll(async () => {
  world = await startWebWorld();
  you = await world.human('you', 'You');
  const bot = await world.bot(you.client, 'helper', 'Helper');
  threadId = (await you.client.createThread({ title: 'Accessible thread' })).thread.threadId;
  await you.client.addParticipant(threadId, 'helper', 'member');
  await say(you.client, threadId, 'Please clean up the build folder.');
  await say(
    bot.client,
    threadId,
    'Here is the plan:\n\n- remove `build/`\n- run the tests\n\n```bash\nrm -rf build && npm test\n```\n\n| step | time |\n|---|---|\n| clean | 1 s |\n| test | 20 s |',
    { inputTokens: 1200, outputTokens: 300, costUsd: 0.012 },
  );
  await askApproval(bot.client, threadId, {
    toolCallId: 'a11y-call',
    command: 'rm -rf build',
    approvers: ['you'],
    preface: 'May I run this?',
  });
  const invite = await you.client.createInvite(threadId);
  invitePath = `/invite#${invite.token}`;
  browser = await openBrowser('a11y');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

const SCREENS: Array<{ name: string; open: (page: Page) => Promise<void> }> = [
  {
    name: 'thread-list',
    open: async (page) => {
      await openSignInLink(page, world.link(you.token, '/'));
      await page.getByRole('list', { name: 'Your threads' }).getByRole('link').first().waitFor();
    },
  },
  {
    name: 'thread-approval',
    open: async (page) => {
      await page.goto(`${world.url}/threads/${threadId}`);
      await page.getByRole('button', { name: 'Approve' }).waitFor();
    },
  },
  {
    name: 'thread-people',
    open: async (page) => {
      await page.getByRole('button', { name: /^People/ }).click();
      await page.getByRole('complementary', { name: 'People on this thread' }).waitFor();
    },
  },
  {
    name: 'bots',
    open: async (page) => {
      await page.goto(`${world.url}/bots`);
      await page
        .getByRole('article', { name: 'Bot helper' })
        .getByRole('button', { name: /^Revoke/ })
        .waitFor();
    },
  },
  {
    name: 'tokens',
    open: async (page) => {
      await page.goto(`${world.url}/tokens`);
      await page.getByRole('list', { name: 'Your tokens' }).waitFor();
    },
  },
];

describe.each([
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
])('axe at $width px', ({ width, height }) => {
  it('finds no serious or critical violation on the signed-out screens (sign-in, invite)', async () => {
    const fresh = await openBrowser(`a11y-signed-out-${width}`);
    try {
      await fresh.page.setViewportSize({ width, height });
      await fresh.step('sign-in', () => fresh.page.goto(world.url));
      await fresh.page.getByRole('heading', { name: 'Sign in to Bubble' }).waitFor();
      await fresh.page.getByRole('button', { name: 'Continue with token' }).waitFor();
      const signIn = serious(await axe(fresh.page));
      await shot(fresh.page, `follow-a11y-sign-in-${width}`);
      await fresh.step('invite', () => fresh.page.goto(`${world.url}${invitePath}`));
      await fresh.page.getByRole('heading', { name: 'You are invited to a thread' }).waitFor();
      const invite = serious(await axe(fresh.page));
      await shot(fresh.page, `follow-a11y-invite-${width}`);
      expect({ signIn, invite }).toEqual({ signIn: [], invite: [] });
    } finally {
      await fresh.close();
    }
  });

  it('finds no serious or critical violation on the signed-in screens', async () => {
    const { page, step } = browser;
    await page.setViewportSize({ width, height });
    const found: Record<string, string[]> = {};
    for (const screen of SCREENS) {
      // On a phone the list and the thread do not show at once: the People panel is opened from the thread.
      await step(`${screen.name} ${width}`, () => screen.open(page));
      found[screen.name] = serious(await axe(page));
      await shot(page, `follow-a11y-${screen.name}-${width}`);
    }
    expect(found).toEqual(Object.fromEntries(SCREENS.map((s) => [s.name, []])));
  });
});

describe('by keyboard alone', () => {
  it('tabs to Approve and presses Enter', async () => {
    const { page, step } = browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await step('open', () => page.goto(`${world.url}/threads/${threadId}`));
    const approve = page.locator('details[data-tool-call-id="a11y-call"]').getByRole('button', { name: 'Approve' });
    await step('approve shown', () => approve.waitFor());
    await page.locator('body').focus();
    await step('tab to Approve', async () => {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press('Tab');
        if (await approve.evaluate((el) => el === document.activeElement)) return;
      }
      throw new Error('Tab never reached Approve');
    });
    // The focused control is visible (focus is not hidden off-screen or under the composer).
    const box = await approve.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.y + box!.height).toBeLessThanOrEqual(800);
    await page.keyboard.press('Enter');
    await step('approved', () => page.getByText('Approved by You').waitFor());
    const events = (await you.client.readEvents(threadId, { after: 0, limit: 1000 })).events;
    expect(events.filter((e) => e.type === 'tool_call_approval').map((e) => [e.principalId, e.data])).toEqual([
      ['you', { toolCallId: 'a11y-call', decision: 'allow' }],
    ]);
  });
});
