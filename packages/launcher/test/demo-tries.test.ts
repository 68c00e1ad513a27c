import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_TRIES } from '@bubble/model-double';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, type Launched } from '../src/launch.js';
import { bubble } from './support/bubble-cli.js';
import { openBrowser, type TestBrowser, openSignInLink } from './support/browser.js';

/**
 * The first run a newcomer gets: `launch()` exactly as `npm start` runs it
 * offline (no script given, so the double's built-in demo; the bot's default
 * tools; the real claude-scuba process and Claude Code CLI), and each thing
 * the welcome note offers, tried end to end: first with the `bubble` CLI and
 * the HTTP API on a thread of its own, then in Chromium on the welcome thread.
 */
let dir: string;
let product: Launched;
let you: BubbleClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-demo-'));
  product = await launch({
    dataDir: join(dir, 'data'),
    port: 0,
    mode: 'double',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  you = new BubbleClient({ url: product.url, token: product.userToken });
}, 60_000);

afterAll(async () => {
  you?.close();
  await product?.stop();
  if (process.env.BUBBLE_KEEP_TEST_DATA === '1') console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
});

type Chunk = {
  type: string;
  toolCallId?: string;
  toolName?: string;
  delta?: string;
  output?: unknown;
  providerMetadata?: { bubble?: { childThreadId?: string; approvers?: string[] } };
};
const chunkOf = (e: EventEnvelope): Chunk => (e.data.chunk ?? { type: '' }) as Chunk;
const fromBot = (e: EventEnvelope) => e.principalId === 'claude';

async function allEvents(threadId: string): Promise<EventEnvelope[]> {
  const events: EventEnvelope[] = [];
  for (;;) {
    const page = await you.readEvents(threadId, { after: events.at(-1)?.seq ?? 0, limit: 1000 });
    events.push(...page.events);
    if (page.events.length < 1000) return events;
  }
}

async function waitFor<T>(
  what: string,
  threadId: string,
  find: (events: EventEnvelope[]) => T | undefined,
  timeoutMs = 45_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let events: EventEnvelope[] = [];
  while (Date.now() < deadline) {
    events = await allEvents(threadId);
    const found = find(events);
    if (found !== undefined && found !== false) return found;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(
    `timed out waiting for ${what}; the thread:\n${events.map((e) => `#${e.seq} ${e.principalId} ${e.type} ${JSON.stringify(e.data).slice(0, 200)}`).join('\n')}`,
  );
}

/** The bot's text in the runs that answer after `afterSeq`, joined. */
const botTextAfter = (events: EventEnvelope[], afterSeq: number) =>
  events
    .filter((e) => e.seq > afterSeq && fromBot(e) && chunkOf(e).type === 'text-delta')
    .map((e) => chunkOf(e).delta)
    .join('');

/** Sends `text` with `bubble say` and returns the seq of its last event. */
async function say(threadId: string, text: string): Promise<number> {
  const said = await bubble(product.url, product.userToken, 'say', threadId, text);
  expect(said).toMatchObject({ code: 0, stderr: '' });
  const runId = said.stdout.trim();
  const events = await allEvents(threadId);
  return events.filter((e) => e.data.runId === runId).at(-1)!.seq;
}

const botRunFinishedAfter = (events: EventEnvelope[], afterSeq: number) =>
  events.find((e) => e.seq > afterSeq && fromBot(e) && e.type === 'run_finished');

describe('the welcome note', () => {
  it('offers each thing to try, in the words the demo script answers', async () => {
    const note = botTextAfter(await allEvents(product.welcomeThreadId), 0);
    expect(note).toContain('I am not running on Claude right now');
    for (const t of DEMO_TRIES) expect(note).toContain(`**${t.prompt}**`);
  });
});

describe('each try, through the bubble CLI and the HTTP API', () => {
  let threadId: string;
  beforeAll(async () => {
    const created = await bubble(
      product.url,
      product.userToken,
      'new',
      '--title',
      'Trying things',
      '--invite',
      'claude',
    );
    expect(created.code).toBe(0);
    threadId = created.stdout.trim();
  });

  it('show me some code: a streamed answer with a code block and folded reasoning', async () => {
    const after = await say(threadId, 'show me some code');
    const events = await waitFor('the answer', threadId, (all) => (botRunFinishedAfter(all, after) ? all : undefined));
    expect(botRunFinishedAfter(events, after)!.data.status).toBe('completed');
    const text = botTextAfter(events, after);
    expect(text).toContain('```ts\nexport function fizzBuzz(n: number): string {');
    // Streamed: the answer reached the thread in several deltas, and the reasoning came first.
    const deltas = events.filter((e) => e.seq > after && fromBot(e) && chunkOf(e).type === 'text-delta');
    expect(deltas.length).toBeGreaterThan(3);
    const reasoning = events.find((e) => e.seq > after && fromBot(e) && chunkOf(e).type === 'reasoning-delta');
    expect(reasoning!.seq).toBeLessThan(deltas[0]!.seq);
    const tail = await bubble(product.url, product.userToken, 'tail', threadId, '--once');
    expect(tail.code).toBe(0);
    expect(tail.stdout).toContain('export function fizzBuzz');
  }, 60_000);

  it('run a command: approved with bubble approve, it runs; a second answer is refused and writes nothing', async () => {
    const after = await say(threadId, 'run a command');
    const request = await waitFor('the approval request', threadId, (all) =>
      all.find((e) => e.seq > after && fromBot(e) && chunkOf(e).type === 'tool-approval-request'),
    );
    const toolCallId = chunkOf(request).toolCallId!;
    expect(chunkOf(request).providerMetadata?.bubble?.approvers).toEqual(['you']);
    const approved = await bubble(product.url, product.userToken, 'approve', threadId, toolCallId);
    expect(approved).toMatchObject({ code: 0, stdout: '' });
    const events = await waitFor('the command to run and the bot to go on', threadId, (all) =>
      botRunFinishedAfter(all, after) ? all : undefined,
    );
    const output = events.find(
      (e) => fromBot(e) && chunkOf(e).type === 'tool-output-available' && chunkOf(e).toolCallId === toolCallId,
    );
    expect(JSON.stringify(chunkOf(output!).output)).toContain('Hello from the sandbox');
    expect(botTextAfter(events, after)).toContain('It ran: the output is under the command above.');

    const head = (await you.getThread(threadId)).headSeq;
    const again = await bubble(product.url, product.userToken, 'deny', threadId, toolCallId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`tool call ${toolCallId} was already answered`);
    expect((await you.getThread(threadId)).headSeq).toBe(head);
  }, 60_000);

  it('run a command: denied with a reason, it does not run', async () => {
    const after = await say(threadId, 'run a command');
    const request = await waitFor('the approval request', threadId, (all) =>
      all.find((e) => e.seq > after && fromBot(e) && chunkOf(e).type === 'tool-approval-request'),
    );
    const toolCallId = chunkOf(request).toolCallId!;
    const denied = await bubble(product.url, product.userToken, 'deny', threadId, toolCallId, '--reason', 'not now');
    expect(denied.code).toBe(0);
    const events = await waitFor('the bot to go on', threadId, (all) =>
      botRunFinishedAfter(all, after) ? all : undefined,
    );
    expect(
      events.some(
        (e) => fromBot(e) && chunkOf(e).type === 'tool-output-denied' && chunkOf(e).toolCallId === toolCallId,
      ),
    ).toBe(true);
    expect(botTextAfter(events, after)).toContain('The command did not run');
  }, 60_000);

  it('tell me a long story: bubble stop ends it mid-stream; stopping it again is refused', async () => {
    const after = await say(threadId, 'tell me a long story');
    const started = await waitFor('the story to stream', threadId, (all) =>
      botTextAfter(all, after).includes('Once upon a time')
        ? all.find((e) => e.seq > after && fromBot(e) && e.type === 'run_started')
        : undefined,
    );
    const runId = String(started.data.runId);
    const stopped = await bubble(product.url, product.userToken, 'stop', threadId, runId);
    expect(stopped.code).toBe(0);
    const finished = await waitFor('the run to end', threadId, (all) =>
      all.find((e) => e.type === 'run_finished' && e.data.runId === runId),
    );
    expect(finished.data).toMatchObject({ status: 'interrupted', interruptedBy: 'you' });
    expect(botTextAfter(await allEvents(threadId), after)).not.toContain('until the end of the log');
    const again = await bubble(product.url, product.userToken, 'stop', threadId, runId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`run ${runId} has already ended`);
  }, 60_000);

  it('use a helper: a sub-agent works in a subthread and reports back', async () => {
    const after = await say(threadId, 'use a helper');
    const call = await waitFor('the sub-agent call', threadId, (all) =>
      all.find(
        (e) =>
          e.seq > after &&
          fromBot(e) &&
          chunkOf(e).type === 'tool-input-available' &&
          chunkOf(e).providerMetadata?.bubble?.childThreadId !== undefined,
      ),
    );
    const childThreadId = chunkOf(call).providerMetadata!.bubble!.childThreadId!;
    expect((await you.getThread(childThreadId)).parentThreadId).toBe(threadId);
    await waitFor("the helper's report in its subthread", childThreadId, (all) =>
      botTextAfter(all, 0).includes("Helper's report") ? true : undefined,
    );
    const events = await waitFor('the parent to go on', threadId, (all) =>
      botTextAfter(all, after).includes('My helper reported back') ? all : undefined,
    );
    expect(botRunFinishedAfter(events, after)?.data.status).toBe('completed');
  }, 60_000);

  it('write a plan: approved, plan.md is an artifact of the thread', async () => {
    const after = await say(threadId, 'write a plan');
    const request = await waitFor('the approval request', threadId, (all) =>
      all.find((e) => e.seq > after && fromBot(e) && chunkOf(e).type === 'tool-approval-request'),
    );
    const approved = await bubble(product.url, product.userToken, 'approve', threadId, chunkOf(request).toolCallId!);
    expect(approved.code).toBe(0);
    const events = await waitFor('the bot to go on', threadId, (all) =>
      botRunFinishedAfter(all, after) ? all : undefined,
    );
    expect(botTextAfter(events, after)).toContain('Written: open **Artifacts**');
    const artifact = await you.getArtifact(threadId, 'plan.md');
    expect(artifact).toMatchObject({ version: 1, mediaType: 'text/markdown' });
    expect(artifact.content).toContain('# Plan');
  }, 60_000);
});

describe('each try, in Chromium, on the welcome thread', () => {
  let browser: TestBrowser;
  beforeAll(async () => {
    browser = await openBrowser('demo');
  });
  afterAll(async () => {
    await browser?.close();
  });

  const composer = () => browser.page.getByRole('textbox', { name: 'Message' });
  async function send(text: string): Promise<number> {
    const before = (await you.getThread(product.welcomeThreadId)).headSeq;
    await composer().fill(text);
    await composer().press('Enter');
    await waitFor('the message on the thread', product.welcomeThreadId, (all) =>
      all.some((e) => e.seq > before && e.principalId === 'you' && chunkOf(e).delta === text) ? true : undefined,
    );
    return before;
  }
  const settled = (after: number) =>
    waitFor('the answer to settle', product.welcomeThreadId, (all) => botRunFinishedAfter(all, after));

  it('signs in and shows the note with things to try', async () => {
    const { page, step } = browser;
    await step('open link', () => openSignInLink(page, product.signInLink));
    await step('things to try', () => page.getByText('Things to try, offline').waitFor());
    for (const t of DEMO_TRIES) await page.getByText(t.prompt, { exact: true }).first().waitFor();
  });

  it('show me some code: the code block appears', async () => {
    const { page, step } = browser;
    const after = await send('show me some code');
    await step('code block', () => page.locator('pre', { hasText: 'fizzBuzz' }).waitFor());
    await settled(after);
  });

  it('run a command: Approve, then the output', async () => {
    const { page, step } = browser;
    const after = await send('run a command');
    await step('approve', () => page.getByRole('button', { name: 'Approve' }).click());
    await step('output', () => page.getByText('Hello from the sandbox').first().waitFor({ timeout: 30_000 }));
    await step('bot goes on', () =>
      page.getByText('It ran: the output is under the command above.').last().waitFor({ timeout: 30_000 }),
    );
    expect((await settled(after)).data.status).toBe('completed');
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
  });

  it('run a command: Deny', async () => {
    const { page, step } = browser;
    const after = await send('run a command');
    await step('deny', () => page.getByRole('button', { name: 'Deny' }).click());
    await step('bot goes on', () => page.getByText('The command did not run').last().waitFor({ timeout: 30_000 }));
    await settled(after);
  });

  it('tell me a long story: Stop', async () => {
    const { page, step } = browser;
    const after = await send('tell me a long story');
    await step('streaming', () =>
      page
        .getByText(/Once upon a time/)
        .last()
        .waitFor(),
    );
    await step('stop', () => page.getByRole('button', { name: "Stop claude's run" }).click());
    const finished = await settled(after);
    expect(finished.data.status).toBe('interrupted');
    expect(botTextAfter(await allEvents(product.welcomeThreadId), after)).not.toContain('until the end of the log');
    await step('no stop button', () =>
      page.getByRole('button', { name: "Stop claude's run" }).waitFor({ state: 'detached' }),
    );
  });

  it('use a helper: open the subthread and read the report', async () => {
    const { page, step } = browser;
    const after = await send('use a helper');
    await step('bot goes on', () => page.getByText('My helper reported back').last().waitFor({ timeout: 45_000 }));
    await settled(after);
    await step('open subthread', () =>
      page.getByRole('link', { name: "Open the sub-agent's subthread" }).last().click(),
    );
    await step('report', () => page.getByText("Helper's report").waitFor());
    await step('back', () => page.getByRole('link', { name: '← Parent thread' }).click());
    await step('parent again', () => page.getByText('Things to try, offline').waitFor());
  });

  it('write a plan: Approve, then read plan.md in Artifacts', async () => {
    const { page, step } = browser;
    const after = await send('write a plan');
    await step('approve', () => page.getByRole('button', { name: 'Approve' }).click());
    await step('bot goes on', () => page.getByText('Written: open').last().waitFor({ timeout: 30_000 }));
    await settled(after);
    await step('artifacts', () => page.getByRole('button', { name: 'Artifacts' }).click());
    await step('plan.md', () => page.getByRole('button', { name: 'plan.md' }).click());
    await step('its heading', () => page.getByRole('heading', { name: 'Plan', exact: true }).waitFor());
  });
});
