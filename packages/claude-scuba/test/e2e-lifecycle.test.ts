import { readFileSync } from 'node:fs';
import type { EventEnvelope } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { runText, startScubaWorld, type ScubaProcess, type ScubaWorld } from './support/scuba-world.js';

/** Restarts, revokes, idle queries, bounded CLI processes, and errors said in plain words. */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const botStarts = (w: ScubaWorld, all: EventEnvelope[]) =>
  all.filter((e) => e.principalId === w.botId && e.type === 'run_started');
const botFinishes = (w: ScubaWorld, all: EventEnvelope[]) =>
  all.filter((e) => e.principalId === w.botId && e.type === 'run_finished');
const humanStarts = (all: EventEnvelope[]) => all.filter((e) => e.principalId === 'alice' && e.type === 'run_started');

async function waitForLog(
  bot: ScubaProcess,
  predicate: (line: Record<string, unknown>) => boolean,
  what: string,
): Promise<void> {
  const deadline = Date.now() + 25_000;
  while (Date.now() < deadline) {
    if (bot.logs.some(predicate)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no log line: ${what}`);
}

describe('reconnect, not restart', () => {
  it('after a restart, a message sent while the bot was down is answered exactly once, in the resumed Claude session', async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'remember',
          match: { text: 'remember the word pelican' },
          reply: [{ type: 'text', text: 'Remembered.' }],
        },
        { name: 'recall', match: { text: 'what was the word' }, reply: [{ type: 'text', text: 'It was pelican.' }] },
      ],
    });
    const w = world;
    const first = w.startBot();
    await w.say('remember the word pelican');
    await w.waitFor((all) => botFinishes(w, all).length === 1, { what: 'the first answer' });
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    await w.say('what was the word');
    const second = w.startBot();
    const events = await w.waitFor((all) => botFinishes(w, all).length === 2, { what: 'the answer after the restart' });
    const starts = botStarts(w, events);
    expect(starts.map((e) => e.data.replyTo)).toEqual([[humanStarts(events)[0]!.seq], [humanStarts(events)[1]!.seq]]);
    expect(runText(events, starts[1]!.data.runId as string)).toBe('It was pelican.');
    // Resumed by session id: the API request carries the earlier conversation.
    const recall = w.double.requests.find(
      (r) => r.kind === 'main' && r.lastUserText === 'alice ("Alice"): what was the word',
    )!;
    expect(JSON.stringify(recall.body)).toContain('remember the word pelican');
    expect(second.logs.some((l) => l.msg === 'opening the Claude query' && typeof l.resume === 'string')).toBe(true);
    // Nothing older is answered again.
    await second.stop();
    expect(botStarts(w, await w.events())).toHaveLength(2);
  });
});

describe('grants', () => {
  it('a revoked grant stops the session and its CLI process', async () => {
    world = await startScubaWorld({ script: [{ reply: [{ type: 'text', text: 'Hello.' }], times: 'always' }] });
    const w = world;
    const bot = w.startBot();
    await w.say('hello');
    await w.waitFor((all) => botFinishes(w, all).length === 1, { what: 'an answer' });
    await w.alice.removeParticipant(w.threadId, w.botId);
    await waitForLog(
      bot,
      (l) => l.msg === 'session stopping' && l.reason === 'revoked' && l.threadId === w.threadId,
      'the session to stop',
    );
    await waitForLog(bot, (l) => l.msg === 'live query ended' && l.threadId === w.threadId, 'the CLI to end');
  });
});

describe('bounded resources', () => {
  it('closes an idle query and resumes it by session id on the next turn', async () => {
    world = await startScubaWorld({
      script: [
        { name: 'one', match: { text: 'first' }, reply: [{ type: 'text', text: 'One.' }] },
        { name: 'two', match: { text: 'second' }, reply: [{ type: 'text', text: 'Two.' }] },
      ],
    });
    const w = world;
    const bot = w.startBot({ configPath: w.writeConfig({ limits: { idleQueryTimeoutSeconds: 1 } }) });
    await w.say('first');
    await w.waitFor((all) => botFinishes(w, all).length === 1, { what: 'the first answer' });
    await waitForLog(
      bot,
      (l) => typeof l.msg === 'string' && l.msg.startsWith('query idle; closing it'),
      'the idle close',
    );
    await w.say('second');
    const events = await w.waitFor((all) => botFinishes(w, all).length === 2, { what: 'the second answer' });
    expect(runText(events, botStarts(w, events)[1]!.data.runId as string)).toBe('Two.');
    const opens = bot.logs.filter((l) => l.msg === 'opening the Claude query');
    expect(opens).toHaveLength(2);
    expect(opens[1]!.resume).toEqual(expect.any(String));
    expect(JSON.stringify(w.double.requests.find((r) => r.lastUserText === 'alice ("Alice"): second')!.body)).toContain(
      'first',
    );
  });

  it('runs at most maxActiveQueries CLI processes; a thread that needs one takes the least recently used idle one', async () => {
    world = await startScubaWorld({ script: [{ reply: [{ type: 'text', text: 'Answer.' }], times: 'always' }] });
    const w = world;
    const { thread } = await w.alice.createThread({ title: 'second thread' });
    await w.alice.addParticipant(thread.threadId, w.botId, 'member');
    const bot = w.startBot({ configPath: w.writeConfig({ limits: { maxActiveQueries: 1 } }) });
    await w.say('first thread question');
    await w.waitFor((all) => botFinishes(w, all).length === 1, { what: 'the first thread answer' });
    await w.alice.appendEvents(thread.threadId, [
      { type: 'run_started', data: { runId: 'q2' } },
      {
        type: 'message_part',
        data: { runId: 'q2', chunk: { type: 'text-delta', id: 't', delta: 'second thread question' } },
      },
      { type: 'run_finished', data: { runId: 'q2', status: 'completed' } },
    ]);
    await w.waitFor((all) => botFinishes(w, all).length === 1, {
      threadId: thread.threadId,
      what: 'the second thread answer',
    });
    const order = bot.logs
      .filter(
        (l) =>
          l.msg === 'opening the Claude query' ||
          (typeof l.msg === 'string' && l.msg.startsWith('query idle; closing it')),
      )
      .map(
        (l) => `${l.msg === 'opening the Claude query' ? 'open' : 'close'} ${l.threadId === w.threadId ? 'A' : 'B'}`,
      );
    expect(order.slice(0, 3)).toEqual(['open A', 'close A', 'open B']);
    expect(bot.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('query idle; closing it'))!.reason).toBe(
      `slot wanted by ${thread.threadId}`,
    );
  });
});

describe('errors are said on the thread in plain words', () => {
  it.each([
    [429, 'rate_limit', 'usage limit is reached'],
    [401, 'auth', 'Claude rejected the credential'],
  ])('an API %i ends the run as an error with an error chunk', async (status, code, words) => {
    world = await startScubaWorld({
      script: [{ name: 'fail', error: { status: status as 429 | 401, retryAfterSeconds: 0 }, times: 'always' }],
    });
    const w = world;
    w.startBot({
      configPath: w.writeConfig({
        claude: { workspaceRoot: './workspaces', configDir: './claude-home', tools: ['Bash'], maxRetries: 0 },
      }),
    });
    await w.say('hello?');
    const events = await w.waitFor((all) => botFinishes(w, all).length === 1, { what: 'the failed run' });
    const finished = botFinishes(w, events)[0]!;
    expect(finished.data).toMatchObject({ status: 'error', error: { code, message: expect.stringContaining(words) } });
    const chunk = events.find(
      (e) =>
        e.principalId === w.botId && e.type === 'message_part' && (e.data.chunk as { type: string }).type === 'error',
    )!;
    expect((chunk.data.chunk as { errorText: string }).errorText).toContain(words);
  });
});

describe('reconnects', () => {
  it('a parked approval and the live query survive the server restarting under the bot', async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'tool',
          match: { text: 'make a file' },
          reply: [
            { type: 'tool_use', id: 'toolu_rc1', name: 'Bash', input: { command: 'touch rc.txt', description: 'rc' } },
          ],
        },
        { name: 'after', match: { toolResult: { name: 'Bash' } }, reply: [{ type: 'text', text: 'Made it.' }] },
      ],
    });
    const w = world;
    const bot = w.startBot();
    await w.say('make a file');
    await waitForLog(
      bot,
      (l) => l.msg === 'tool call waits for approval' && l.toolCallId === 'toolu_rc1',
      'the parked call',
    );
    await w.server.restart();
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_rc1', decision: 'allow' },
    });
    const events = await w.waitFor((all) => botFinishes(w, all).length === 1, {
      what: 'the run to finish after the reconnect',
    });
    expect(botFinishes(w, events)[0]!.data.status).toBe('completed');
    expect(runText(events, botStarts(w, events)[0]!.data.runId as string)).toBe('Made it.');
    expect(bot.logs.filter((l) => l.msg === 'opening the Claude query')).toHaveLength(1);
  });
});

describe('a CLI that dies', () => {
  it('ends the run as an error in plain words, and the next turn resumes the session in a new CLI', async () => {
    world = await startScubaWorld({
      script: [
        { name: 'hello', match: { text: 'hello first' }, reply: [{ type: 'text', text: 'Hi.' }] },
        {
          name: 'slow',
          match: { text: 'tell a long story' },
          reply: [{ type: 'text', text: Array.from({ length: 80 }, (_, i) => `w${i}`).join(' '), delayMs: 100 }],
        },
        { name: 'after', match: { text: 'are you back' }, reply: [{ type: 'text', text: 'Back again.' }] },
      ],
    });
    const w = world;
    // No spare CLI: the bot's one CLI child is the thread's.
    const bot = w.startBot({ configPath: w.writeConfig({ limits: { spareEngines: 0 } }) });
    await w.say('hello first');
    await w.waitFor((all) => botFinishes(w, all).length === 1, { what: 'the first answer' });
    await w.say('tell a long story');
    await w.waitFor(
      (all) =>
        all.filter(
          (e) =>
            e.principalId === w.botId &&
            e.type === 'message_part' &&
            (e.data.chunk as { type: string }).type === 'text-delta',
        ).length >= 2,
      {
        what: 'the story to start',
      },
    );
    const children = readFileSync(`/proc/${bot.child.pid}/task/${bot.child.pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    const cli = children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('claude'));
    expect(cli).toBeDefined();
    process.kill(cli!, 'SIGKILL');
    const failed = await w.waitFor((all) => botFinishes(w, all).length === 2, { what: 'the failed run' });
    expect(botFinishes(w, failed)[1]!.data).toMatchObject({ status: 'error', error: { message: expect.any(String) } });
    await w.say('are you back');
    const events = await w.waitFor((all) => botFinishes(w, all).length === 3, { what: 'the next answer' });
    expect(runText(events, botStarts(w, events)[2]!.data.runId as string)).toBe('Back again.');
    expect(botFinishes(w, events)[2]!.data.status).toBe('completed');
    const opens = bot.logs.filter((l) => l.msg === 'opening the Claude query');
    expect(opens).toHaveLength(2);
    expect(opens[1]!.resume).toEqual(expect.any(String));
    expect(
      JSON.stringify(w.double.requests.find((r) => r.lastUserText === 'alice ("Alice"): are you back')!.body),
    ).toContain('hello first');
  });
});
