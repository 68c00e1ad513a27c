import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Script } from '@bubble/model-double';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, type Launched } from '../src/launch.js';
import { createHumanPrincipal } from '@bubble/server';
import { openBrowser, SCREENSHOT_DIR, type TestBrowser, openSignInLink } from './support/browser.js';

/**
 * The browser steps against the whole product: `launch()` (server +
 * web UI + first-run world + model double + the real claude-scuba process and
 * Claude Code CLI), driven through Debian's Chromium by playwright-core.
 * One product and one browser for the file; each test uses its own message.
 */
const bash = (id: string, command: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'Bash',
  input: { command, description: 'Run a command' },
});
const STORY = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');

const script: Script = [
  {
    name: 'after-approved',
    match: { toolResult: { name: 'Bash', isError: false } },
    times: 'always',
    reply: [{ type: 'text', text: 'The command ran fine.' }],
  },
  {
    name: 'after-denied',
    match: { toolResult: { name: 'Bash', isError: true } },
    times: 'always',
    reply: [{ type: 'text', text: 'Understood, I did not run it.' }],
  },
  {
    name: 'after-agent',
    match: { toolResult: { name: 'Agent' } },
    times: 'always',
    reply: [{ type: 'text', text: 'The helper reported back.' }],
  },
  ...[false, true].map((background) => ({
    name: `sub-tool-${background ? 'bg' : 'fg'}`,
    match: { subagent: true, text: `Please write the ${background ? 'background' : 'foreground'} file` },
    reply: [
      bash(`toolu_sub_${background ? 'bg' : 'fg'}`, `touch sub-${background ? 'bg' : 'fg'}.txt && echo sub-wrote-it`),
    ],
  })),
  {
    name: 'sub',
    match: { subagent: true },
    times: 'always',
    reply: [{ type: 'text', text: 'Sub-agent report: all good.', chunkWords: 2, delayMs: 20 }],
  },
  {
    name: 'stream',
    match: { text: 'stream please', subagent: false },
    reply: [
      { type: 'thinking', thinking: 'The user wants a streamed answer.' },
      {
        type: 'text',
        text: 'Here is **bold** text and code:\n\n```js\nconst answer = 42;\n```\n\nDone streaming.',
        chunkWords: 1,
        delayMs: 40,
      },
    ],
  },
  {
    name: 'approve-me',
    match: { text: 'run the approved command', subagent: false },
    reply: [bash('toolu_ok1', 'touch made-7.txt && echo approved-output-7')],
  },
  {
    name: 'deny-me',
    match: { text: 'run the denied command', subagent: false },
    reply: [bash('toolu_no1', 'touch denied.txt && echo should-not-run')],
  },
  {
    name: 'long',
    match: { text: 'tell a long story', subagent: false },
    reply: [{ type: 'text', text: STORY, chunkWords: 1, delayMs: 150 }],
  },
  ...[false, true].map((background) => ({
    name: `delegate-${background ? 'bg' : 'fg'}`,
    match: { text: `delegate the ${background ? 'background' : 'foreground'} file`, subagent: false },
    reply: [
      {
        type: 'tool_use' as const,
        id: `toolu_agent_${background ? 'bg' : 'fg'}`,
        name: 'Agent',
        input: {
          description: 'Write a file',
          prompt: `Please write the ${background ? 'background' : 'foreground'} file`,
          subagent_type: 'general-purpose',
          run_in_background: background,
        },
      },
    ],
  })),
  {
    name: 'notified',
    match: { taskNotification: true },
    times: 'always',
    reply: [{ type: 'text', text: 'The background helper is done.' }],
  },
  {
    name: 'delegate',
    match: { text: 'use a helper', subagent: false },
    reply: [
      {
        type: 'tool_use',
        id: 'toolu_agent1',
        name: 'Agent',
        input: { description: 'Check things', prompt: 'Please check the things', subagent_type: 'general-purpose' },
      },
    ],
  },
];

let dir: string;
let product: Launched;
let browser: TestBrowser;
let you: BubbleClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-browser-'));
  product = await launch({
    dataDir: join(dir, 'data'),
    port: 0,
    mode: 'double',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    doubleScript: script,
    claudeConfig: { tools: ['Bash', 'Agent'] },
  });
  you = new BubbleClient({ url: product.url, token: product.userToken });
  browser = await openBrowser('flows');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  you?.close();
  await product?.stop();
  // BUBBLE_KEEP_TEST_DATA=1 keeps the data folder (bot logs in launcher/claude-scuba.log) for a post-mortem.
  if (process.env.BUBBLE_KEEP_TEST_DATA === '1') console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
});

const composer = () => browser.page.getByRole('textbox', { name: 'Message' });

async function say(text: string): Promise<void> {
  await composer().fill(text);
  await composer().press('Enter');
  await browser.page.locator('article.run.mine', { hasText: text }).waitFor();
}

async function events(threadId: string): Promise<EventEnvelope[]> {
  return (await you.readEvents(threadId, { after: 0, limit: 1000 })).events;
}

describe('the web UI in Chromium', () => {
  it('signs in through the printed link and lands on the welcome thread', async () => {
    const { page, step } = browser;
    await step('open link', () => openSignInLink(page, product.signInLink));
    await step('signed in', () => page.getByTestId('me').filter({ hasText: 'You' }).waitFor());
    await step('welcome note', () => page.getByText('I am not running on Claude right now').waitFor());
    expect(new URL(page.url()).hash).toBe('');
    expect(await page.evaluate(() => window.location.href)).not.toContain('bubble_user_');
    await step('thread listed', () => page.getByRole('link', { name: 'Welcome to Bubble' }).waitFor());
  });

  it("sends a message with Enter and shows the bot's reply streaming in", async () => {
    const { page, step } = browser;
    await step('compose with a line break', async () => {
      await composer().fill('stream please');
      await composer().press('Shift+Enter');
      await composer().pressSequentially('now');
      expect(await composer().inputValue()).toBe('stream please\nnow');
      await composer().press('Enter');
    });
    await step('own message shown', () => page.locator('article.run.mine', { hasText: 'stream please' }).waitFor());
    await step('partial text before the end', async () => {
      await page.waitForFunction(() => {
        const runs = document.querySelectorAll('article[aria-label="Message from claude"]');
        const last = runs[runs.length - 1];
        return last?.getAttribute('data-status') === 'streaming' && (last.textContent ?? '').includes('Here is');
      });
    });
    await step('completed', () =>
      page
        .locator('article[aria-label="Message from claude"][data-status="completed"]', { hasText: 'Done streaming.' })
        .waitFor(),
    );
    const done = page.locator('article[aria-label="Message from claude"]', { hasText: 'Done streaming.' });
    expect(await done.locator('strong', { hasText: 'bold' }).count()).toBe(1);
    expect(await done.locator('pre code.hljs.language-js .hljs-keyword').first().textContent()).toBe('const');
    await step('reasoning folded', async () => {
      const reasoning = done.locator('details.reasoning');
      expect(await reasoning.getAttribute('open')).toBeNull();
      await reasoning.locator('summary').click();
      await reasoning.getByText('The user wants a streamed answer.').waitFor();
    });
    // The thread holds the message exactly once, as one complete run.
    const all = await events(product.welcomeThreadId);
    const mine = all.filter(
      (e) =>
        e.principalId === 'you' &&
        e.type === 'message_part' &&
        (e.data.chunk as { type: string }).type === 'text-delta',
    );
    expect(mine.map((e) => (e.data.chunk as { delta: string }).delta)).toEqual(['stream please\nnow']);
  });

  it('approves a tool call and shows its output and who answered', async () => {
    const { page, step } = browser;
    await say('run the approved command');
    const call = page.locator('details[data-tool-call-id="toolu_ok1"]');
    await step('approve buttons', () => call.getByRole('button', { name: 'Approve' }).waitFor());
    expect(await call.locator('.tool-input').textContent()).toContain('echo approved-output-7');
    await step('approve', () => call.getByRole('button', { name: 'Approve' }).click());
    await step('answered by', () => call.locator('p.approval', { hasText: 'Approved by You' }).waitFor());
    await step('output', () => call.locator('.tool-output', { hasText: 'approved-output-7' }).waitFor());
    await step('bot continues', () => page.getByText('The command ran fine.').waitFor());
    expect(await call.getByRole('button', { name: 'Approve' }).count()).toBe(0);
  });

  it('denies a tool call with a reason', async () => {
    const { page, step } = browser;
    await say('run the denied command');
    const call = page.locator('details[data-tool-call-id="toolu_no1"]');
    await step('deny form', () => call.getByRole('button', { name: 'Deny' }).waitFor());
    await call.getByLabel('Reason to deny (optional)').fill('not on this machine');
    await step('deny', () => call.getByRole('button', { name: 'Deny' }).click());
    await step('answered by', () =>
      call.locator('p.approval', { hasText: 'Denied by You: not on this machine' }).waitFor(),
    );
    await step('bot continues', () => page.getByText('Understood, I did not run it.').waitFor());
    const all = await events(product.welcomeThreadId);
    expect(
      all
        .filter((e) => e.type === 'tool_call_approval' && e.data.toolCallId === 'toolu_no1')
        .map((e) => [e.principalId, e.data]),
    ).toEqual([['you', { toolCallId: 'toolu_no1', decision: 'deny', reason: 'not on this machine' }]]);
    expect(JSON.stringify(all)).not.toContain('should-not-run\\n');
  });

  it('stops a long run with the Stop button', async () => {
    const { page, step } = browser;
    await say('tell a long story');
    const run = page.locator('article[aria-label="Message from claude"]', { hasText: 'word3 ' });
    await step('streaming', () => run.getByRole('button', { name: "Stop claude's run" }).waitFor());
    await step('stop', () => run.getByRole('button', { name: "Stop claude's run" }).click());
    await step('stopped', () =>
      page.locator('article[aria-label="Message from claude"][data-status="interrupted"]').waitFor({ timeout: 30_000 }),
    );
    const text =
      (await page.locator('article[aria-label="Message from claude"][data-status="interrupted"]').textContent()) ?? '';
    expect(text).not.toContain('word119');
    const all = await events(product.welcomeThreadId);
    expect(all.some((e) => e.type === 'run_interrupt_requested' && e.principalId === 'you')).toBe(true);
  });

  it("opens a sub-agent's subthread and follows it", async () => {
    const { page, step } = browser;
    await say('use a helper');
    const link = page.getByRole('link', { name: "Open the sub-agent's subthread" });
    await step('subthread link', () => link.waitFor());
    await step('parent finishes', () => page.getByText('The helper reported back.').waitFor());
    await step('open', () => link.click());
    expect(page.url()).toMatch(/\/threads\/th_[a-z0-9]+\.sub-[a-z0-9]{5}-[a-z0-9]{3}$/);
    await step('sub-agent text', () => page.getByText('Sub-agent report: all good.').waitFor());
    await step('back to parent', () => page.getByRole('link', { name: '← Parent thread' }).click());
    await step('parent again', () => page.getByText('The helper reported back.').waitFor());
  });

  it.each([false, true])(
    "shows a sub-agent's call waiting on the parent thread: Approve for the bot's owner only, who may approve for everyone else (background: %s)",
    async (background) => {
      const { page, step } = browser;
      const kind = background ? 'background' : 'foreground';
      // Bob owns the thread too, but not the bot: he may not approve its tools.
      const bobId = `bob-${kind}`;
      const bob = await createHumanPrincipal(product.server.store, bobId, 'Bob');
      await you.addParticipant(product.welcomeThreadId, bobId, 'owner');
      // A stranger to you: Bob accepts the invitation (protocol.md, Consent).
      await new BubbleClient({ url: product.url, token: bob.token.token }).acceptInvitation(product.welcomeThreadId);
      const bobBrowser = await openBrowser(`flows-${bobId}`);
      try {
        await bobBrowser.step('bob signs in', () =>
          openSignInLink(bobBrowser.page, `${product.url}/threads/${product.welcomeThreadId}#token=${bob.token.token}`),
        );
        await bobBrowser.step('bob on the thread', () =>
          bobBrowser.page.getByTestId('me').filter({ hasText: 'Bob' }).waitFor(),
        );
        await step('home thread', () => page.getByRole('link', { name: 'Welcome to Bubble' }).click());
        await say(`delegate the ${kind} file`);
        const card = (p: typeof page) =>
          p.locator(`.approval-request[data-tool-call-id="toolu_sub_${background ? 'bg' : 'fg'}"]`);
        await step('request card', () => card(page).getByRole('button', { name: 'Approve' }).waitFor());
        expect(await card(page).locator('.tool-input').textContent()).toContain(
          `touch sub-${background ? 'bg' : 'fg'}.txt`,
        );
        expect(await card(page).getByRole('link', { name: "Open the sub-agent's subthread" }).count()).toBe(1);
        await bobBrowser.step('bob sees who may approve', () =>
          card(bobBrowser.page).getByText('Waiting for You to approve or deny.').waitFor(),
        );
        expect(await card(bobBrowser.page).getByRole('button', { name: 'Approve' }).count()).toBe(0);
        expect(await card(bobBrowser.page).getByRole('button', { name: 'Deny' }).count()).toBe(0);
        mkdirSync(SCREENSHOT_DIR, { recursive: true });
        await page.screenshot({ path: join(SCREENSHOT_DIR, `subagent-request-${kind}-owner.png`) });
        await card(bobBrowser.page).screenshot({ path: join(SCREENSHOT_DIR, `subagent-request-${kind}-other.png`) });
        await step('approve', () => card(page).getByRole('button', { name: 'Approve' }).click());
        await step('approved', () => card(page).locator('p.approval', { hasText: 'Approved by You' }).waitFor());
        await bobBrowser.step('bob sees the answer', () =>
          card(bobBrowser.page).locator('p.approval', { hasText: 'Approved by You' }).waitFor(),
        );
        await step('helper done', () =>
          page
            .getByText(background ? 'The background helper is done.' : 'The helper reported back.')
            .last()
            .waitFor({ timeout: 30_000 }),
        );
      } finally {
        await bobBrowser.close();
        await you.removeParticipant(product.welcomeThreadId, bobId);
      }
    },
    90_000,
  );

  it('switches who may add a bot on the Bots page, and says what it means', async () => {
    const { page, step } = browser;
    await step('bots page', () =>
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bots' }).click(),
    );
    const card = page.getByRole('article', { name: 'Bot claude' });
    const group = card.getByRole('group', { name: 'Who may add this bot to a thread' });
    await step('owners by default', () => group.getByRole('radio', { name: /Only its owners/ }).waitFor());
    expect(await group.getByRole('radio', { name: /Only its owners/ }).isChecked()).toBe(true);
    expect(await group.textContent()).toContain("The bot works, and spends, on its owners' behalf");
    await step('open it up', () => group.getByRole('radio', { name: 'Anyone on a thread' }).check());
    await step('said so', () => card.getByText('Anyone on a thread may now add claude.').waitFor());
    expect((await you.getPrincipal('claude')).joinableBy).toBe('anyone');
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await card.screenshot({ path: join(SCREENSHOT_DIR, 'bots-joinable.png') });
    await step('close it again', () => group.getByRole('radio', { name: /Only its owners/ }).check());
    await step('said so again', () => card.getByText('Only you and its other owners may add claude now.').waitFor());
    expect((await you.getPrincipal('claude')).joinableBy).toBe('owners');
  });

  it('creates a thread, invites the bot, counts unread, shows artifact versions, and leaves', async () => {
    const { page, step } = browser;
    await step('home', () => page.getByRole('link', { name: 'Bubble', exact: true }).click());
    await page.getByLabel('New thread').fill('Planning');
    await step('create', () => page.getByRole('button', { name: 'Create' }).click());
    await step('opened', () => page.getByRole('heading', { name: 'Planning' }).waitFor());
    const threadId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await step('people', () => page.getByRole('button', { name: /^People/ }).click());
    await page.getByLabel('Invite a person or bot').fill('clau');
    const found = page
      .getByRole('list', { name: 'Search results' })
      .getByRole('listitem')
      .filter({ has: page.locator('[data-principal-id="claude"] .bot-badge') });
    await step('invite', () => found.getByRole('button', { name: 'Add claude', exact: true }).click());
    await step('joined', () => page.getByText('claude joined as member').waitFor());
    expect((await you.listParticipants(threadId)).map((g) => [g.principalId, g.role])).toEqual([
      ['you', 'owner'],
      ['claude', 'member'],
    ]);

    // Artifacts: two versions written through the API, both readable in the panel.
    await you.putArtifact(threadId, 'plan.md', { content: '# Plan v1', mediaType: 'text/markdown' });
    await you.putArtifact(threadId, 'plan.md', { content: '# Plan v2', mediaType: 'text/markdown', baseVersion: 1 });
    await step('artifacts', () => page.getByRole('button', { name: 'Artifacts' }).click());
    await step('listed', () => page.getByRole('button', { name: 'plan.md' }).click());
    await step('latest', () => page.getByRole('heading', { name: 'Plan v2' }).waitFor());
    await page.getByLabel('Version of plan.md').selectOption('1');
    await step('version 1', () => page.getByRole('heading', { name: 'Plan v1' }).waitFor());

    // Unread: messages by others that land while another thread is open are counted in the list:
    // messages, not events (two of the bot's, five events each; two custom events count for nothing).
    await step('back to welcome', () => page.getByRole('link', { name: 'Welcome to Bubble' }).click());
    const claude = new BubbleClient({ url: product.url, token: product.botToken });
    try {
      for (const [n, text] of ['A first note for you.', 'A second note for you.'].entries()) {
        const runId = `flows-unread-${n}`;
        await claude.appendEvents(threadId, [
          { type: 'run_started', data: { runId } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
          { type: 'run_finished', data: { runId, status: 'completed' } },
        ]);
      }
    } finally {
      claude.close();
    }
    await you.appendEvents(threadId, [
      { type: 'acme.note', data: { n: 1 } },
      { type: 'acme.note', data: { n: 2 } },
    ]);
    await step('unread badge', () =>
      page
        .getByRole('link', { name: /Planning/ })
        .getByLabel(/^\d+ unread$/)
        .waitFor(),
    );
    // The list refreshes every few seconds: it settles on the two messages, though head − cursor is twelve events.
    const badge = page.getByRole('link', { name: /Planning/ }).getByLabel(/^\d+ unread$/);
    await expect.poll(() => badge.getAttribute('aria-label'), { timeout: 15_000 }).toBe('2 unread');
    expect((await you.getThread(threadId)).headSeq - (await you.getCursor(threadId))).toBeGreaterThanOrEqual(12);

    // Leave: the thread goes from the list.
    await step('open planning', () => page.getByRole('link', { name: /Planning/ }).click());
    // Leaving a thread stores the cursor at once: nothing shown stays unread.
    const welcomeHead = (await you.getThread(product.welcomeThreadId)).headSeq;
    await expect.poll(() => you.getCursor(product.welcomeThreadId)).toBe(welcomeHead);
    await step('people again', () => page.getByRole('button', { name: /^People/ }).click());
    page.once('dialog', (dialog) => void dialog.accept());
    await step('leave', () => page.getByRole('button', { name: 'Leave thread' }).click());
    await step('gone', () => page.getByRole('link', { name: /Planning/ }).waitFor({ state: 'detached' }));
    expect((await you.listThreads()).map((t) => t.threadId)).not.toContain(threadId);
  });

  it("is usable by keyboard alone and fits a phone's width", async () => {
    const { page, step } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await step('open thread', () => page.goto(`${product.url}/threads/${product.welcomeThreadId}`));
      await step('thread shown', () => page.getByRole('heading', { name: 'Welcome to Bubble' }).waitFor());
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await step('tab to the composer', async () => {
        for (let i = 0; i < 40; i++) {
          if (await page.evaluate(() => document.activeElement?.id === 'composer-input')) return;
          await page.keyboard.press('Tab');
        }
        throw new Error('Tab never reached the composer');
      });
      await page.keyboard.type('typed by keyboard only');
      await page.keyboard.press('Enter');
      await step('sent', () => page.locator('article.run.mine', { hasText: 'typed by keyboard only' }).waitFor());
    } finally {
      await page.setViewportSize({ width: 1200, height: 800 });
    }
  });

  it('creates a bot and shows its token once, with the config snippet', async () => {
    const { page, step } = browser;
    await step('bots page', () =>
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bots' }).click(),
    );
    await step('claude listed', () => page.getByRole('article', { name: 'Bot claude' }).waitFor());
    await page.getByLabel('Bot id (lowercase letters, digits, . _ -)').fill('helper-bot');
    await page.getByLabel('Display name (optional)').fill('Helper');
    await step('create', () => page.getByRole('button', { name: 'Create bot' }).click());
    const token = await step('token shown', async () => {
      await page.getByTestId('fresh-token').waitFor();
      return page.getByTestId('fresh-token').inputValue();
    });
    expect(token).toMatch(/^bubble_agent_[A-Za-z0-9_-]{40,}$/);
    expect(await page.locator('pre.snippet').textContent()).toContain('"principalId": "helper-bot"');
    // The token works, for the bot it was made for.
    const bot = new BubbleClient({ url: product.url, token });
    expect((await bot.whoami()).principalId).toBe('helper-bot');
    bot.close();
    await step('dismiss', () => page.getByRole('button', { name: 'I have saved it' }).click());
    await page.reload();
    await step('after reload', () => page.getByRole('article', { name: 'Bot helper-bot' }).waitFor());
    expect(await page.getByTestId('fresh-token').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    // Revoking from the page stops the token at once.
    const card = page.getByRole('article', { name: 'Bot helper-bot' });
    // Revoking asks first (what it does to whatever runs with the token); yes revokes it.
    await step('revoke', () => card.getByRole('button', { name: 'Revoke' }).click());
    await step('confirm', () => card.getByRole('button', { name: 'Yes, revoke it' }).click());
    await step('revoked', () => card.getByText(/^Revoked tok_/).waitFor());
    const revoked = new BubbleClient({ url: product.url, token, retry: false });
    await expect(revoked.whoami()).rejects.toMatchObject({ code: 'unauthorized' });
    revoked.close();
  });
});
