import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Script } from '@bubble/model-double';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { countAnswers, humanMessages, longestBotOnlyStreak, notExactlyOnce } from './support/answer-ledger.js';
import { runText, startScubaWorld, waitForLog, type ScubaProcess, type ScubaWorld } from './support/scuba-world.js';
import { allFinished, botRuns, finishedOf, firstDelta, quickRule, slowRule } from './support/turn-helpers.js';

/**
 * Issue 12: every person's message is answered exactly once, counted from the
 * thread's events, through asides, tool steps, kill -9 of the bot, a client
 * that never finishes its message, and a CLI that keeps dying. The real
 * server, the real claude-scuba binary, the real CLI and the model double.
 */
let world: ScubaWorld | undefined;
const clients: BubbleClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await world?.close();
  world = undefined;
});

const slow = (match: string, n = 40, delayMs = 60) => slowRule(match, n, delayMs);
const quick = (match: string, text: string) => quickRule(match, text, 'always');
const isHuman = (id: string) => id === 'alice' || id === 'bob';

async function bob(w: ScubaWorld): Promise<BubbleClient> {
  const { token } = await w.server.createHuman('bob', 'Bob');
  await w.alice.addParticipant(w.threadId, 'bob', 'member');
  const client = new BubbleClient({ url: w.server.url, token: token.token! });
  // alice cannot see bob yet: he accepts her invitation (protocol.md, Consent).
  await client.acceptInvitation(w.threadId);
  clients.push(client);
  return client;
}

/** Every person's message answered exactly once by the bot, and no run of the bot left open. */
function expectExactlyOnce(w: ScubaWorld, events: EventEnvelope[]): void {
  const count = countAnswers(events, w.botId, humanMessages(events, isHuman));
  expect(notExactlyOnce(count)).toEqual([]);
  expect(count.open).toEqual([]);
}

async function kill9(bot: ScubaProcess): Promise<void> {
  bot.child.kill('SIGKILL');
  await bot.exited;
}

describe('asides: a message written while the bot answers', () => {
  it('during a plain-text turn: one follow-up turn answers it as soon as the turn ends, with no other event needed', async () => {
    world = await startScubaWorld({
      script: [slow('tell a long story'), quick('also mention dragons', 'Dragons, then.')],
    });
    const w = world;
    const b = await bob(w);
    const bot = w.startBot();
    await w.say('tell a long story');
    const streaming = await w.waitFor(firstDelta(w), { what: 'the first delta' });
    const first = botRuns(w, streaming)[0]!;
    const [aside] = await w.say('also mention dragons', undefined, b);
    const events = await w.waitFor((all) => botRuns(w, all).length === 2 && allFinished(w)(all), {
      what: 'the follow-up turn',
    });
    const followUp = events.find(
      (e) => e.principalId === w.botId && e.type === 'run_started' && e.data.runId !== first,
    )!;
    expect(followUp.data.replyTo).toEqual([aside!.seq]);
    expect(runText(events, followUp.data.runId as string)).toBe('Dragons, then.');
    expect(finishedOf(w, events, first)!.data).not.toHaveProperty('replyTo');
    expect(bot.logs.some((l) => l.msg === 'follow-up turn for what was written during the last one')).toBe(true);
    const main = w.double.requests.filter((r) => r.kind === 'main');
    expect(main).toHaveLength(2);
    expect(main[1]!.lastUserText).toContain('also mention dragons');
    expectExactlyOnce(w, events);
  });

  it('during a tool step: the step after the tool takes it in, the run says it answered it, and no extra turn follows', async () => {
    const script: Script = [
      {
        name: 'tool',
        match: { text: 'make a file' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_aside1',
            name: 'Bash',
            input: { command: 'touch made.txt', description: 'Make a file' },
          },
        ],
      },
      {
        name: 'after',
        match: { toolResult: { name: 'Bash' } },
        reply: [{ type: 'text', text: 'Made it, and read your note.' }],
      },
      quick('', 'An extra turn that must not happen.'),
    ];
    world = await startScubaWorld({ script });
    const w = world;
    const b = await bob(w);
    const bot = w.startBot();
    await w.say('make a file');
    await waitForLog(bot, (l) => l.msg === 'tool call waits for approval', 'the parked call');
    const [aside] = await w.say('use a .txt name please', undefined, b);
    await waitForLog(bot, (l) => l.msg === 'steering the running turn', 'the aside steered');
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_aside1', decision: 'allow' },
    });
    const events = await w.waitFor(allFinished(w), { what: 'the run to finish' });
    const runs = botRuns(w, events).filter((id) => !id.startsWith('approval-'));
    expect(runs).toHaveLength(1);
    expect(finishedOf(w, events, runs[0]!)!.data).toMatchObject({ status: 'completed', replyTo: [aside!.seq] });
    expect(runText(events, runs[0]!)).toBe('Made it, and read your note.');
    const main = w.double.requests.filter((r) => r.kind === 'main');
    expect(main).toHaveLength(2);
    expect(JSON.stringify(main[1]!.body)).toContain('use a .txt name please');
    // Nothing else comes: the aside was answered by the turn it was steered into.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(w.double.requests.filter((r) => r.kind === 'main')).toHaveLength(2);
    expectExactlyOnce(w, await w.events());
  });
});

describe('kill -9 of the bot, then a restart', () => {
  it('in the middle of a reply: the run is closed bot_restarted before anything new starts, and the message is not answered again', async () => {
    world = await startScubaWorld({
      script: [slow('tell a long story', 80, 80), quick('next question', 'Next answer.')],
    });
    const w = world;
    const bot = w.startBot();
    await w.say('tell a long story');
    const streaming = await w.waitFor(firstDelta(w), { what: 'the first delta' });
    const cut = botRuns(w, streaming)[0]!;
    await kill9(bot);
    const again = w.startBot();
    const closed = await w.waitFor((all) => finishedOf(w, all, cut) !== undefined, { what: 'the cut run closed' });
    expect(finishedOf(w, closed, cut)!.data).toMatchObject({ status: 'error', error: { code: 'bot_restarted' } });
    await waitForLog(again, (l) => l.msg === 'closing my runs that a restart left open', 'the close logged');
    await w.say('next question');
    const events = await w.waitFor((all) => botRuns(w, all).length === 2 && allFinished(w)(all), {
      what: 'the next answer',
    });
    expect(runText(events, botRuns(w, events)[1]!)).toBe('Next answer.');
    expectExactlyOnce(w, events);
    expect(
      w.double.requests.filter((r) => r.kind === 'main' && r.lastUserText.includes('tell a long story')),
    ).toHaveLength(1);
  });

  it('with an aside steered and not yet answered: after the restart it is answered once, the cut reply is closed', async () => {
    world = await startScubaWorld({
      script: [slow('tell a long story', 80, 80), quick('', 'Answered after the restart.')],
    });
    const w = world;
    const b = await bob(w);
    const bot = w.startBot();
    await w.say('tell a long story');
    await w.waitFor(firstDelta(w), { what: 'the first delta' });
    await w.say('and what about the sea', undefined, b);
    await waitForLog(bot, (l) => l.msg === 'steering the running turn', 'the aside steered');
    await kill9(bot);
    w.startBot();
    const events = await w.waitFor((all) => botRuns(w, all).length === 2 && allFinished(w)(all), {
      what: 'the aside answered after the restart',
    });
    expect(runText(events, botRuns(w, events)[1]!)).toBe('Answered after the restart.');
    expectExactlyOnce(w, events);
  });

  it('with an approval parked: the request and the reply are closed, nothing is answered twice, the thread goes on', async () => {
    const script: Script = [
      {
        name: 'tool',
        match: { text: 'make a file' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_k9',
            name: 'Bash',
            input: { command: 'touch k.txt', description: 'Make a file' },
          },
        ],
      },
      quick('', 'Fine.'),
    ];
    world = await startScubaWorld({ script });
    const w = world;
    const bot = w.startBot();
    await w.say('make a file');
    await waitForLog(bot, (l) => l.msg === 'tool call waits for approval', 'the parked call');
    await kill9(bot);
    w.startBot();
    const closed = await w.waitFor(allFinished(w), { what: 'every run of the bot closed' });
    expect(botRuns(w, closed).map((runId) => finishedOf(w, closed, runId)!.data.error)).toEqual([
      expect.objectContaining({ code: 'bot_restarted' }),
    ]);
    await w.say('carry on');
    const events = await w.waitFor((all) => botRuns(w, all).length === 2 && allFinished(w)(all), {
      what: 'the next answer',
    });
    expect(runText(events, botRuns(w, events)[1]!)).toBe('Fine.');
    expectExactlyOnce(w, events);
  });
});

describe('a message that never finishes (a browser closed mid-message)', () => {
  it('does not hold back what comes after it, is taken as it stands once quiet, and no restart answers anything twice', async () => {
    world = await startScubaWorld({ script: [quick('', 'Answered.')] });
    const w = world;
    const b = await bob(w);
    // Three bot starts: no spare CLI for each (none of them is what this test is about).
    const config = w.writeConfig({ turns: { staleRunSeconds: 3 }, limits: { spareEngines: 0 } });
    const bot = w.startBot({ configPath: config });
    // Bob's client dies mid-message: a run_started and some words, never a run_finished.
    await b.appendEvents(w.threadId, [
      { type: 'run_started', data: { runId: 'bob-stuck' } },
      { type: 'message_part', data: { runId: 'bob-stuck', chunk: { type: 'text-start', id: 't' } } },
      {
        type: 'message_part',
        data: { runId: 'bob-stuck', chunk: { type: 'text-delta', id: 't', delta: 'half a question about' } },
      },
    ]);
    await w.say('a question of my own');
    const answered = await w.waitFor((all) => botRuns(w, all).length === 1 && allFinished(w)(all), {
      what: "the answer to Alice's message",
    });
    const alice = answered.find((e) => e.principalId === 'alice' && e.type === 'run_started')!;
    expect(answered.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.replyTo).toEqual([
      alice.seq,
    ]);
    // Bob's words are answered once he has been quiet for staleRunSeconds.
    const both = await w.waitFor((all) => botRuns(w, all).length === 2 && allFinished(w)(all), {
      what: "Bob's stuck message answered",
      timeoutMs: 20_000,
    });
    const stuck = both.find((e) => e.principalId === 'bob' && e.type === 'run_started')!;
    expect(both.filter((e) => e.principalId === w.botId && e.type === 'run_started')[1]!.data.replyTo).toEqual([
      stuck.seq,
    ]);
    await waitForLog(
      bot,
      (l) => l.msg === 'a message never finished and its author went quiet: taking it as it stands',
      'the stale run logged',
    );

    // Two restarts, one of them a kill -9: neither answers anything again.
    await bot.stop();
    const second = w.startBot({ configPath: config });
    await waitForLog(second, (l) => l.msg === 'thread starts', 'the second start reading the thread');
    await kill9(second);
    w.startBot({ configPath: config });
    await w.say('one more');
    const events = await w.waitFor((all) => botRuns(w, all).length === 3 && allFinished(w)(all), {
      what: 'the answer to one more',
    });
    expect(events.filter((e) => e.principalId === w.botId && e.type === 'run_started')[2]!.data.replyTo).toEqual([
      events.filter((e) => e.principalId === 'alice' && e.type === 'run_started')[1]!.seq,
    ]);
    expectExactlyOnce(w, events);
  });
});

/** Pids of processes whose environment names this CLAUDE_CONFIG_DIR (the bot's CLI and what it spawned). */
function processesWithConfigDir(configDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`CLAUDE_CONFIG_DIR=${configDir}`))
        pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

describe('a CLI that keeps dying', () => {
  it('is started again after 1 s, 2 s, 4 s; the thread is told once; a message written meanwhile is answered when it comes back', {
    timeout: 90_000,
  }, async () => {
    world = await startScubaWorld({ script: [quick('', 'Back and answering.')] });
    const w = world;
    // No spare CLI: every CLI under the config dir is killed, and only the thread's may count.
    const bot = w.startBot({ configPath: w.writeConfig({ limits: { restartBackoffMaxSeconds: 4, spareEngines: 0 } }) });
    const configDir = join(w.dir, 'claude-home');
    let kills = 0;
    const killer = setInterval(() => {
      if (kills >= 3) return;
      const pids = processesWithConfigDir(configDir);
      if (pids.length === 0) return;
      kills += 1;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }, 20);
    try {
      await w.say('hello');
      await waitForLog(
        bot,
        (l) => l.msg === 'Claude failed; waiting before starting it again' && l.failures === 1,
        'the first failure',
      );
      // Written while Claude is down: each waits for the next start (and the CLI dies again).
      await w.say('are you there');
      await waitForLog(
        bot,
        (l) => l.msg === 'Claude failed; waiting before starting it again' && l.failures === 2,
        'the second failure',
      );
      await w.say('anyone?');
      const told = await w.waitFor(
        (all) =>
          all.some(
            (e) =>
              e.principalId === w.botId &&
              e.type === 'message_part' &&
              String((e.data.chunk as { delta?: string }).delta ?? '').includes('keeps failing'),
          ),
        {
          what: 'the crash-loop notice',
          timeoutMs: 30_000,
        },
      );
      expect(kills).toBe(3);
      const delays = bot.logs
        .filter((l) => l.msg === 'Claude failed; waiting before starting it again')
        .map((l) => l.delayMs);
      expect(delays).toEqual([1000, 2000, 4000]);
      // Written during the last wait: answered when Claude comes back, with nothing else written.
      const [later] = await w.say('still there?');
      const events = await w.waitFor(
        (all) =>
          all.some(
            (e) =>
              e.principalId === w.botId &&
              e.type === 'run_started' &&
              (e.data.replyTo as number[] | undefined)?.includes(later!.seq),
          ) && allFinished(w)(all),
        {
          what: 'the answer once Claude is back',
          timeoutMs: 30_000,
        },
      );
      const answer = events.find(
        (e) =>
          e.principalId === w.botId &&
          e.type === 'run_started' &&
          (e.data.replyTo as number[] | undefined)?.includes(later!.seq),
      )!;
      expect(finishedOf(w, events, answer.data.runId as string)!.data.status).toBe('completed');
      expect(runText(events, answer.data.runId as string)).toBe('Back and answering.');
      const notices = events.filter(
        (e) =>
          e.principalId === w.botId &&
          e.type === 'message_part' &&
          String((e.data.chunk as { delta?: string }).delta ?? '').includes('keeps failing'),
      );
      expect(notices).toHaveLength(1);
      expect(told.length).toBeGreaterThan(0);
      expectExactlyOnce(w, events);
    } finally {
      clearInterval(killer);
    }
  });
});

describe('usage per run', () => {
  it('is right on the first run after an idle close: a new CLI counts its cost from zero', async () => {
    const script: Script = [
      {
        name: 'small',
        match: { text: 'small question' },
        reply: [{ type: 'text', text: 'Small.' }],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      {
        name: 'big',
        match: { text: 'big question' },
        reply: [{ type: 'text', text: 'Big.' }],
        usage: { input_tokens: 200_000, output_tokens: 4_000 },
      },
    ];
    world = await startScubaWorld({ script });
    const w = world;
    const bot = w.startBot({ configPath: w.writeConfig({ limits: { idleQueryTimeoutSeconds: 1 } }) });
    await w.say('small question');
    await w.waitFor((all) => botRuns(w, all).length === 1 && allFinished(w)(all), { what: 'the first answer' });
    await waitForLog(
      bot,
      (l) => l.msg === 'query idle; closing it (it resumes by session id on the next turn)',
      'the idle close',
    );
    await w.say('big question');
    const events = await w.waitFor((all) => botRuns(w, all).length === 2 && allFinished(w)(all), {
      what: 'the second answer',
    });
    const [first, second] = botRuns(w, events).map(
      (runId) => finishedOf(w, events, runId)!.data.usage as Record<string, number>,
    );
    expect(first).toMatchObject({ inputTokens: 100, outputTokens: 10 });
    expect(second).toMatchObject({ inputTokens: 200_000, outputTokens: 4_000 });
    expect(first!.costUsd).toBeGreaterThan(0);
    // The second run is the new CLI's first: its cost is the whole of that CLI's running total, not total minus the old CLI's.
    expect(second!.costUsd).toBe(second!.totalCostUsd);
    expect(second!.costUsd).toBeGreaterThan(first!.costUsd!);
  });
});

describe('two bots on one thread', () => {
  it('take at most maxBotOnlyTurns bot-only turns in a row between them, counted on the thread, then stop', {
    timeout: 60_000,
  }, async () => {
    world = await startScubaWorld({ script: [quick('', 'Reply.')] });
    const w = world;
    const { token } = await w.alice.createBot({ principalId: 'bot-second', displayName: 'Second bot' });
    await w.alice.addParticipant(w.threadId, 'bot-second', 'member');
    const turns = { maxBotOnlyTurns: 2 };
    w.startBot({ configPath: w.writeConfig({ turns }) });
    const second = w.writeConfig(
      {
        turns,
        claude: { workspaceRoot: './workspaces-2', configDir: './claude-home-2', tools: ['Bash'] },
        store: { path: './state-2.db' },
      },
      'bot-second',
    );
    w.startBot({ configPath: second, env: { BOT_TOKEN: token.token! } });
    await w.say('hello both of you');
    const bots = new Set([w.botId, 'bot-second']);
    const runsOf = (all: EventEnvelope[]) => all.filter((e) => bots.has(e.principalId) && e.type === 'run_started');
    const settled = (all: EventEnvelope[]) =>
      runsOf(all).every((s) =>
        all.some((e) => e.type === 'run_finished' && e.principalId === s.principalId && e.data.runId === s.data.runId),
      );
    // Quiet: every run finished and nothing new for 4 s.
    let events = await w.waitFor((all) => runsOf(all).length >= 2 && settled(all), { what: 'both bots answering' });
    for (let seen = runsOf(events).length; ; seen = runsOf(events).length) {
      await new Promise((resolve) => setTimeout(resolve, 4000));
      events = await w.waitFor(settled, { what: 'every run finished' });
      if (runsOf(events).length === seen) break;
    }
    const streak = longestBotOnlyStreak(events, (id) => bots.has(id));
    // Both bots read the same count, and a bot-only turn starts only once its run_started is on the thread after every earlier turn.
    expect(streak).toBeGreaterThanOrEqual(1);
    expect(streak).toBeLessThanOrEqual(turns.maxBotOnlyTurns);
    // Each answered Alice once.
    const [hello] = humanMessages(events, isHuman);
    for (const bot of bots) expect(countAnswers(events, bot, [hello!]).answers.get(hello!)).toBe(1);
    // Runs the guard closed say so and carry no words.
    const guarded = events.filter(
      (e) => e.type === 'run_finished' && String(e.data.interruptReason ?? '').startsWith('loop guard'),
    );
    for (const end of guarded)
      expect(
        events.some(
          (e) => e.type === 'message_part' && e.principalId === end.principalId && e.data.runId === end.data.runId,
        ),
      ).toBe(false);
  });
});

/**
 * One CLI slot; thread A's turn parks a tool call on Alice's approval; then thread B gets a message
 * and needs the slot.
 */
async function parkedWhileBNeedsTheSlot(script: Script, toolCallId: string) {
  world = await startScubaWorld({ script });
  const w = world;
  const { thread } = await w.alice.createThread({ title: 'B' });
  await w.alice.addParticipant(thread.threadId, w.botId, 'member');
  const bot = w.startBot({ configPath: w.writeConfig({ limits: { maxActiveQueries: 1 } }) });
  await w.say('make a file');
  await waitForLog(
    bot,
    (l) => l.msg === 'tool call waits for approval' && l.toolCallId === toolCallId,
    'the parked call',
  );
  await w.alice.appendEvents(thread.threadId, [
    { type: 'run_started', data: { runId: 'b1' } },
    {
      type: 'message_part',
      data: { runId: 'b1', chunk: { type: 'text-delta', id: 't', delta: 'hello from thread B' } },
    },
    { type: 'run_finished', data: { runId: 'b1', status: 'completed' } },
  ]);
  return { w, bot, thread };
}

describe('CLI slots', () => {
  it('a thread waiting on a person gives its slot to another thread, and resumes by session id when the answer comes', {
    timeout: 60_000,
  }, async () => {
    const script: Script = [
      {
        name: 'tool',
        match: { text: 'make a file' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_y1',
            name: 'Bash',
            input: { command: 'touch yielded.txt', description: 'Make a file' },
          },
        ],
      },
      {
        name: 'again',
        match: { text: 'make the same call again' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_y2',
            name: 'Bash',
            input: { command: 'touch yielded.txt', description: 'Make a file' },
          },
        ],
      },
      {
        name: 'after',
        match: { toolResult: { name: 'Bash' } },
        reply: [{ type: 'text', text: 'Made it after all.' }],
        times: 'always',
      },
      {
        name: 'later',
        match: { text: 'once more later' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_y4',
            name: 'Bash',
            input: { command: 'touch yielded.txt', description: 'Make a file' },
          },
        ],
      },
      quick('hello from thread B', 'B answered.'),
    ];
    const { w, bot, thread } = await parkedWhileBNeedsTheSlot(script, 'toolu_y1');
    // B is answered while A still waits on Alice: A gave its slot up.
    const b = await w.waitFor((all) => botRuns(w, all).length === 1 && allFinished(w)(all), {
      threadId: thread.threadId,
      what: "thread B's answer",
    });
    expect(runText(b, botRuns(w, b)[0]!)).toBe('B answered.');
    await waitForLog(bot, (l) => l.msg === 'waiting on a person: yielded my CLI slot', 'the yield');
    const a = await w.events();
    expect(allFinished(w)(a)).toBe(false);

    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_y1', decision: 'allow' },
    });
    const events = await w.waitFor((all) => allFinished(w)(all), { what: "thread A's run to finish" });
    const [runId] = botRuns(w, events);
    expect(botRuns(w, events)).toHaveLength(1);
    expect(finishedOf(w, events, runId!)!.data.status).toBe('completed');
    expect(runText(events, runId!)).toBe('Made it after all.');
    const chunks = events
      .filter((e) => e.principalId === w.botId && e.type === 'message_part')
      .map((e) => e.data.chunk as { type: string; toolCallId?: string; errorText?: string });
    expect(chunks.find((c) => c.type === 'tool-output-error' && c.toolCallId === 'toolu_y1')?.errorText).toContain(
      'closed to free a slot',
    );
    expect(chunks.some((c) => c.type === 'tool-output-available' && c.toolCallId === 'toolu_y2')).toBe(true);
    expect(
      bot.logs.some(
        (l) => l.msg === 'the same call again: answered while its CLI was closed' && l.toolCallId === 'toolu_y2',
      ),
    ).toBe(true);
    expect(
      bot.logs.some(
        (l) => l.msg === 'opening the Claude query' && l.threadId === w.threadId && typeof l.resume === 'string',
      ),
    ).toBe(true);
    expect(readdirSync(join(w.dir, 'workspaces', w.threadId))).toContain('yielded.txt');
    expectExactlyOnce(w, events);
    // The answer stood for one call, in that run: the same call in a later run asks again.
    await w.say('once more later');
    await waitForLog(
      bot,
      (l) => l.msg === 'tool call waits for approval' && l.toolCallId === 'toolu_y4',
      'the later call parked, not pre-approved',
    );
  });

  it('a run whose CLI gave its slot up is stopped by an interrupt, without its CLI', { timeout: 60_000 }, async () => {
    const script: Script = [
      {
        name: 'tool',
        match: { text: 'make a file' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_y3',
            name: 'Bash',
            input: { command: 'touch never.txt', description: 'Make a file' },
          },
        ],
      },
      quick('hello from thread B', 'B answered.'),
    ];
    const { w, bot } = await parkedWhileBNeedsTheSlot(script, 'toolu_y3');
    await waitForLog(bot, (l) => l.msg === 'waiting on a person: yielded my CLI slot', 'the yield');
    const [runId] = botRuns(w, await w.events());
    await w.alice.appendEvent(w.threadId, {
      type: 'run_interrupt_requested',
      data: { runId: runId!, reason: 'never mind' },
    });
    const events = await w.waitFor((all) => allFinished(w)(all), { what: 'the interrupted run' });
    expect(finishedOf(w, events, runId!)!.data).toMatchObject({
      status: 'interrupted',
      interruptedBy: 'alice',
      interruptReason: 'never mind',
    });
    const chunks = events
      .filter((e) => e.principalId === w.botId && e.type === 'message_part')
      .map((e) => e.data.chunk as { type: string; toolCallId?: string; errorText?: string });
    expect(chunks.find((c) => c.toolCallId === 'toolu_y3' && c.type === 'tool-output-error')?.errorText).toContain(
      'the run was stopped',
    );
    expect(readdirSync(join(w.dir, 'workspaces', w.threadId))).not.toContain('never.txt');
    expectExactlyOnce(w, events);
  });
});
