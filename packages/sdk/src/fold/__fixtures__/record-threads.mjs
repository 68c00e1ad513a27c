#!/usr/bin/env node
// Records the threads under this folder from the whole product: `launch()` runs the real
// server, the real claude-scuba process with the real Claude Code CLI, and the model double
// scripting the model's side. A person ("you") drives each thread over HTTP the way the web UI
// does (messages as complete runs, approvals, Stop), then every event of the thread (and of its
// subthreads) is read back with GET /v1/threads/:id/events and written one JSON line each.
//
//   npm run build && node packages/sdk/src/fold/__fixtures__/record-threads.mjs
//
// Then `UPDATE_GOLDEN=1 npx vitest run packages/sdk/src/fold` rewrites the expected folds;
// review the diff by eye. Ids and times differ on every recording.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '@bubble/launcher';
import { BubbleClient } from '@bubble/sdk';
import { createHumanPrincipal } from '@bubble/server';

const here = dirname(fileURLToPath(import.meta.url));
const bash = (id, command) => ({ type: 'tool_use', id, name: 'Bash', input: { command, description: 'Run a command' } });
const agent = (id, prompt, background) => ({
  type: 'tool_use',
  id,
  name: 'Agent',
  input: { description: 'Write a file', prompt, subagent_type: 'general-purpose', run_in_background: background },
});

const script = [
  { name: 'after-ok', match: { toolResult: { name: 'Bash', isError: false } }, times: 'always', reply: [{ type: 'text', text: 'The command ran fine.' }] },
  { name: 'after-no', match: { toolResult: { name: 'Bash', isError: true } }, times: 'always', reply: [{ type: 'text', text: 'Understood, I did not run it.' }] },
  { name: 'after-agent', match: { toolResult: { name: 'Agent' } }, times: 'always', reply: [{ type: 'text', text: 'The helper reported back.' }] },
  { name: 'sub-fg', match: { subagent: true, text: 'Please write the foreground file' }, reply: [bash('toolu_sub_fg', 'touch sub-fg.txt && echo sub-wrote-it')] },
  { name: 'sub-bg', match: { subagent: true, text: 'Please write the background file' }, reply: [bash('toolu_sub_bg', 'touch sub-bg.txt && echo sub-wrote-it')] },
  { name: 'sub', match: { subagent: true }, times: 'always', reply: [{ type: 'text', text: 'Sub-agent report: all good.', chunkWords: 2, delayMs: 10 }] },
  {
    name: 'stream',
    match: { text: 'stream please', subagent: false },
    reply: [
      { type: 'thinking', thinking: 'The user wants a streamed answer.' },
      { type: 'text', text: 'Here is **bold** text and code:\n\n```js\nconst answer = 42;\n```\n\nDone streaming.', chunkWords: 1, delayMs: 5 },
    ],
  },
  { name: 'approve-me', match: { text: 'run the approved command', subagent: false }, reply: [bash('toolu_ok1', 'touch made.txt && echo approved-output')] },
  { name: 'deny-me', match: { text: 'run the denied command', subagent: false }, reply: [bash('toolu_no1', 'touch denied.txt && echo should-not-run')] },
  { name: 'long', match: { text: 'tell a long story', subagent: false }, reply: [{ type: 'text', text: Array.from({ length: 120 }, (_, i) => `word${i}`).join(' '), chunkWords: 1, delayMs: 60 }] },
  { name: 'delegate-fg', match: { text: 'delegate the foreground file', subagent: false }, reply: [agent('toolu_agent_fg', 'Please write the foreground file', false)] },
  { name: 'delegate-bg', match: { text: 'delegate the background file', subagent: false }, reply: [agent('toolu_agent_bg', 'Please write the background file', true)] },
  { name: 'notified', match: { taskNotification: true }, times: 'always', reply: [{ type: 'text', text: 'The background helper is done.' }] },
];

const dir = mkdtempSync(join(tmpdir(), 'bubble-record-'));
const product = await launch({
  dataDir: join(dir, 'data'),
  port: 0,
  mode: 'double',
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  doubleScript: script,
  claudeConfig: { tools: ['Bash', 'Agent'] },
  buildWebIfMissing: false,
});
const you = new BubbleClient({ url: product.url, token: product.userToken });
let runs = 0;

async function allEvents(threadId) {
  const events = [];
  for (;;) {
    const page = await you.readEvents(threadId, { after: events.at(-1)?.seq ?? 0, limit: 1000 });
    events.push(...page.events);
    if (page.events.length < 1000) return events;
  }
}

async function waitFor(threadId, predicate, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await allEvents(threadId);
    if (predicate(events)) return events;
    if (Date.now() > deadline) {
      const lines = events.map((e) => `${e.seq} ${e.principalId} ${e.type} ${JSON.stringify(e.data).slice(0, 200)}`);
      throw new Error(`timed out waiting for ${what} on ${threadId}:\n${lines.join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function say(threadId, text) {
  runs += 1;
  const runId = `you-run-${runs}`;
  const part = (n, chunk) => ({ type: 'message_part', data: { runId, chunk }, clientEventId: `${runId}:${n}` });
  return you.appendEvents(threadId, [
    { type: 'run_started', data: { runId }, clientEventId: `${runId}:0` },
    part(1, { type: 'text-start', id: `${runId}:t0` }),
    part(2, { type: 'text-delta', id: `${runId}:t0`, delta: text }),
    part(3, { type: 'text-end', id: `${runId}:t0` }),
    { type: 'run_finished', data: { runId, status: 'completed' }, clientEventId: `${runId}:4` },
  ]);
}

const chunk = (event) => (event.type === 'message_part' ? event.data.chunk : {});
const bySelf = (event) => event.principalId === 'claude';
const textOf = (events) => events.map((e) => (chunk(e).type === 'text-delta' ? chunk(e).delta : '')).join('');
const finishedCount = (events) => events.filter((e) => bySelf(e) && e.type === 'run_finished').length;
const requestFor = (toolCallId) => (events) =>
  events.some((e) => chunk(e).type === 'tool-approval-request' && chunk(e).toolCallId === toolCallId);

async function newThread(title) {
  const { thread } = await you.createThread({ title });
  await you.addParticipant(thread.threadId, 'claude', 'member');
  return thread.threadId;
}

async function write(name, threadId) {
  const events = await allEvents(threadId);
  writeFileSync(join(here, `${name}.jsonl`), `${events.map((event) => JSON.stringify(event)).join('\n')}\n`);
  const children = new Set(
    events.flatMap((e) => {
      const bubble = chunk(e).providerMetadata?.bubble ?? {};
      return [bubble.childThreadId, bubble.threadId].filter((id) => typeof id === 'string');
    }),
  );
  let n = 0;
  for (const child of children) {
    n += 1;
    const sub = await allEvents(child);
    writeFileSync(join(here, `${name}.sub-${n}.jsonl`), `${sub.map((event) => JSON.stringify(event)).join('\n')}\n`);
  }
  console.log(`${name}: ${events.length} events, ${children.size} subthreads`);
}

try {
  await waitFor(product.welcomeThreadId, (events) => events.length >= 3, 'the welcome note');
  await write('welcome-note', product.welcomeThreadId);

  const streamed = await newThread('Streamed reply');
  await say(streamed, 'stream please');
  await waitFor(streamed, (e) => finishedCount(e) >= 1, 'the streamed reply');
  await write('streamed-reply-with-reasoning', streamed);

  // Bob is a member: his answer comes first and does not count (the bot's owner is the approver).
  const approved = await newThread('Approved tool');
  const bob = await createHumanPrincipal(product.server.store, 'bob', 'Bob');
  const bobClient = new BubbleClient({ url: product.url, token: bob.token.token });
  await you.addParticipant(approved, 'bob', 'member');
  await say(approved, 'run the approved command');
  await waitFor(approved, requestFor('toolu_ok1'), 'the approval request');
  await bobClient.appendEvent(approved, { type: 'tool_call_approval', data: { toolCallId: 'toolu_ok1', decision: 'allow' } });
  await you.appendEvent(approved, { type: 'tool_call_approval', data: { toolCallId: 'toolu_ok1', decision: 'allow' } });
  await waitFor(approved, (e) => textOf(e).includes('The command ran fine.') && finishedCount(e) >= 1, 'the end of the approved run');
  await write('tool-approved-after-an-ignored-answer', approved);

  const denied = await newThread('Denied tool');
  await say(denied, 'run the denied command');
  await waitFor(denied, requestFor('toolu_no1'), 'the approval request');
  await you.appendEvent(denied, {
    type: 'tool_call_approval',
    data: { toolCallId: 'toolu_no1', decision: 'deny', reason: 'not on this machine' },
  });
  await waitFor(denied, (e) => finishedCount(e) >= 1, 'the end of the denied run');
  await write('tool-denied-with-a-reason', denied);

  const stopped = await newThread('Stopped run');
  await say(stopped, 'tell a long story');
  const streaming = await waitFor(stopped, (e) => e.filter((x) => bySelf(x) && chunk(x).type === 'text-delta').length >= 5, 'some words');
  const runId = streaming.find((e) => bySelf(e) && e.type === 'run_started').data.runId;
  await you.appendEvent(stopped, { type: 'run_interrupt_requested', data: { runId, reason: 'you pressed Stop' } });
  await waitFor(stopped, (e) => finishedCount(e) >= 1, 'the interrupted run');
  await write('run-interrupted-by-stop', stopped);

  for (const kind of ['foreground', 'background']) {
    const thread = await newThread(`Sub-agent, ${kind}`);
    await say(thread, `delegate the ${kind} file`);
    const toolCallId = kind === 'foreground' ? 'toolu_sub_fg' : 'toolu_sub_bg';
    await waitFor(thread, requestFor(toolCallId), "the sub-agent's approval request");
    await you.appendEvent(thread, { type: 'tool_call_approval', data: { toolCallId, decision: 'allow' } });
    const done = kind === 'foreground' ? 'The helper reported back.' : 'The background helper is done.';
    await waitFor(thread, (e) => textOf(e).includes(done), 'the parent run after the helper');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await write(`subagent-${kind}-approved-on-the-parent`, thread);
  }

  // People, artifacts, an extension's event and a bare-delta turn, written by hand.
  const people = await newThread('People and artifacts');
  await you.addParticipant(people, 'bob', 'member');
  await you.putArtifact(people, 'plan.md', { content: '# Plan v1', mediaType: 'text/markdown' });
  await bobClient.putArtifact(people, 'plan.md', { content: '# Plan v2', mediaType: 'text/markdown', baseVersion: 1 });
  await you.appendEvent(people, { type: 'acme.poll_created', data: { question: 'lunch?' } });
  await bobClient.appendEvents(people, [
    { type: 'message_part', data: { runId: 'bob-bare', chunk: { type: 'text-start', id: 'b' } } },
    { type: 'message_part', data: { runId: 'bob-bare', chunk: { type: 'text-delta', id: 'b', delta: 'noodles, ' } } },
    { type: 'message_part', data: { runId: 'bob-bare', chunk: { type: 'text-delta', id: 'b', delta: '@claude?' } } },
    { type: 'message_part', data: { runId: 'bob-bare', chunk: { type: 'text-end', id: 'b' } } },
  ]);
  await waitFor(people, (e) => finishedCount(e) >= 1, "the bot's answer to bob");
  await you.removeParticipant(people, 'bob');
  await write('people-artifacts-and-a-bare-turn', people);
  bobClient.close();
} finally {
  you.close();
  await product.stop();
  rmSync(dir, { recursive: true, force: true });
}
