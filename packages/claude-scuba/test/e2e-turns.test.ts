import { BubbleClient } from '@bubble/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { runText, startScubaWorld, type ScubaWorld } from './support/scuba-world.js';
import { botRuns, finishedOf, firstDelta, lastUserBlocks, quickRule, slowRule, words } from './support/turn-helpers.js';

/** Turns: interrupts, wait-for-idle, the steer lane, who said what, respondTo, bot-only limits. */
let world: ScubaWorld | undefined;
const clients: BubbleClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await world?.close();
  world = undefined;
});

const slow = (match: string, n = 60, delayMs = 100) => slowRule(match, n, delayMs);
const quick = (match: string, text: string) => quickRule(match, text);

async function human(
  w: ScubaWorld,
  id: string,
  name: string,
  role: 'member' | 'owner' = 'member',
): Promise<BubbleClient> {
  const { token } = await w.server.createHuman(id, name);
  await w.alice.addParticipant(w.threadId, id, role);
  const client = new BubbleClient({ url: w.server.url, token: token.token! });
  // alice cannot see them yet: they accept her invitation (protocol.md, Consent).
  await client.acceptInvitation(w.threadId);
  clients.push(client);
  return client;
}

describe('interrupts', () => {
  it('any participant interrupts the running turn; run_finished says interrupted and who asked; the query stays usable', async () => {
    world = await startScubaWorld({ script: [slow('tell a long story'), quick('are you there', 'Still here.')] });
    const w = world;
    const bob = await human(w, 'bob', 'Bob');
    w.startBot();
    await w.say('tell a long story');
    const streaming = await w.waitFor(firstDelta(w), { what: 'the first delta' });
    const runId = botRuns(w, streaming)[0]!;
    await bob.appendEvent(w.threadId, { type: 'run_interrupt_requested', data: { runId, reason: 'enough' } });
    const stopped = await w.waitFor((all) => finishedOf(w, all, runId) !== undefined, {
      what: 'the interrupted run_finished',
    });
    expect(finishedOf(w, stopped, runId)!.data).toMatchObject({
      runId,
      status: 'interrupted',
      interruptedBy: 'bob',
      interruptReason: 'enough',
    });
    expect(runText(stopped, runId).length).toBeLessThan(words(60).length);

    await w.say('are you there');
    const after = await w.waitFor(
      (all) => botRuns(w, all).length === 2 && finishedOf(w, all, botRuns(w, all)[1]!) !== undefined,
      { what: 'the next turn' },
    );
    const second = botRuns(w, after)[1]!;
    expect(runText(after, second)).toBe('Still here.');
    expect(finishedOf(w, after, second)!.data.status).toBe('completed');
  });

  it('an interrupt of a turn still waiting for a CLI slot stops it once it starts', async () => {
    world = await startScubaWorld({
      script: [slow('tell a long story', 20, 100), slow('second thread story', 40, 100)],
    });
    const w = world;
    const { thread } = await w.alice.createThread({ title: 'second' });
    await w.alice.addParticipant(thread.threadId, w.botId, 'member');
    const bot = w.startBot({ configPath: w.writeConfig({ limits: { maxActiveQueries: 1 } }) });
    await w.say('tell a long story');
    await w.waitFor(firstDelta(w), { what: 'thread A streaming' });
    await w.alice.appendEvents(thread.threadId, [
      { type: 'run_started', data: { runId: 'b1' } },
      {
        type: 'message_part',
        data: { runId: 'b1', chunk: { type: 'text-delta', id: 't', delta: 'second thread story' } },
      },
      { type: 'run_finished', data: { runId: 'b1', status: 'completed' } },
    ]);
    const waiting = await w.waitFor((all) => botRuns(w, all).length === 1, {
      threadId: thread.threadId,
      what: "thread B's run_started",
    });
    const runId = botRuns(w, waiting)[0]!;
    // The wait is said on the thread, in the run, and in the log.
    const told = await w.waitFor(
      (all) =>
        all.some(
          (e) =>
            e.type === 'message_part' &&
            e.data.runId === runId &&
            (e.data.chunk as { type: string }).type === 'data-status',
        ),
      {
        threadId: thread.threadId,
        what: 'the slot-wait status',
      },
    );
    expect(told.find((e) => e.type === 'message_part' && e.data.runId === runId)!.data.chunk).toEqual({
      type: 'data-status',
      data: { waitingForSlot: 1, slots: 1 },
    });
    expect(bot.logs.some((l) => l.msg === 'turn waits for a CLI slot' && l.position === 1 && l.runId === runId)).toBe(
      true,
    );
    await w.alice.appendEvent(thread.threadId, { type: 'run_interrupt_requested', data: { runId } });
    const events = await w.waitFor((all) => finishedOf(w, all, runId) !== undefined, {
      threadId: thread.threadId,
      what: "thread B's run_finished",
    });
    expect(finishedOf(w, events, runId)!.data).toMatchObject({ status: 'interrupted', interruptedBy: 'alice' });
    expect(runText(events, runId).length).toBeLessThan(words(40).length);
    const a = await w.events();
    expect(finishedOf(w, a, botRuns(w, a)[0]!)!.data.status).toBe('completed');
  });

  it('an interrupt cancels a parked approval, and says so on the thread', async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'tool',
          match: { text: 'make a file' },
          reply: [
            { type: 'tool_use', id: 'toolu_int1', name: 'Bash', input: { command: 'touch x.txt', description: 'x' } },
          ],
        },
      ],
    });
    const w = world;
    w.startBot();
    await w.say('make a file');
    const parked = await w.waitFor(
      (all) =>
        all.some(
          (e) =>
            e.principalId === w.botId &&
            (e.data.chunk as { type?: string } | undefined)?.type === 'tool-input-available',
        ),
      { what: 'the tool call' },
    );
    const runId = botRuns(w, parked)[0]!;
    await w.alice.appendEvent(w.threadId, { type: 'run_interrupt_requested', data: { runId } });
    const events = await w.waitFor((all) => finishedOf(w, all, runId) !== undefined, { what: 'run_finished' });
    expect(finishedOf(w, events, runId)!.data).toMatchObject({ status: 'interrupted', interruptedBy: 'alice' });
    const denial = events.find((e) => e.principalId === w.botId && e.type === 'tool_call_approval');
    expect(denial?.data).toMatchObject({
      toolCallId: 'toolu_int1',
      decision: 'deny',
      reason: expect.stringContaining('interrupted'),
    });
  });
});

describe('the drain rule', () => {
  it('waits for idle (steer off): what two people said meanwhile drains as one message, a block per speaker quoted by id', async () => {
    world = await startScubaWorld({ script: [slow('tell a long story', 30, 50), quick('', 'Noted, both of you.')] });
    const w = world;
    const bob = await human(w, 'bob', 'Bob');
    w.startBot({ configPath: w.writeConfig({ turns: { steer: false } }) });
    await w.say('tell a long story');
    await w.waitFor(firstDelta(w), { what: 'the first delta' });
    await w.say('first point from alice');
    await w.say('second point from bob', undefined, bob);
    const events = await w.waitFor(
      (all) => botRuns(w, all).length === 2 && finishedOf(w, all, botRuns(w, all)[1]!) !== undefined,
      { what: 'the second turn' },
    );
    const started = events.filter((e) => e.principalId === w.botId && e.type === 'run_started');
    const humanRuns = events.filter((e) => e.principalId !== w.botId && e.type === 'run_started').map((e) => e.seq);
    expect(started[1]!.data.replyTo).toEqual(humanRuns.slice(1));
    const request = w.double.requests.filter((r) => r.kind === 'main').at(-1)!;
    expect(lastUserBlocks(request.body)).toEqual([
      'alice ("Alice"): first point from alice',
      'bob ("Bob"): second point from bob',
    ]);
    expect(botRuns(w, events)).toHaveLength(2);
  });

  it('steers what it would not answer into the running turn as context: no turn of its own, and Claude has it next time', async () => {
    world = await startScubaWorld({ script: [slow('tell a long story', 30, 50), quick('what next', 'Next then.')] });
    const w = world;
    const bob = await human(w, 'bob', 'Bob');
    const bot = w.startBot({ configPath: w.writeConfig({ turns: { respondTo: 'mentions' } }) });
    await w.say('@bot-research tell a long story');
    const streaming = await w.waitFor(firstDelta(w), { what: 'the first delta' });
    const first = botRuns(w, streaming)[0]!;
    // Not addressed to the bot: steered in as context only (an aside to answer gets a turn: e2e-exactly-once).
    await w.say('also mention dragons', undefined, bob);
    await w.waitFor((all) => finishedOf(w, all, first) !== undefined, { what: 'the first run to finish' });
    expect(
      bot.logs.some((l) => l.msg === 'steering the running turn (as context, not to be answered)' && l.runId === first),
    ).toBe(true);

    await w.say('@bot-research what next');
    const events = await w.waitFor(
      (all) => botRuns(w, all).length >= 2 && finishedOf(w, all, botRuns(w, all)[1]!) !== undefined,
      { what: 'the second turn' },
    );
    expect(botRuns(w, events)).toHaveLength(2);
    expect(runText(events, botRuns(w, events)[1]!)).toBe('Next then.');
    const main = w.double.requests.filter((r) => r.kind === 'main');
    expect(main).toHaveLength(2);
    expect(JSON.stringify(main.at(-1)!.body)).toContain('bob (\\"Bob\\"): also mention dragons');
  });

  it('runs carrying only tool chunks are consumed silently', async () => {
    world = await startScubaWorld({ script: [quick('', 'Answered.')] });
    const w = world;
    const bot = w.startBot();
    await w.alice.appendEvents(w.threadId, [
      { type: 'run_started', data: { runId: 'tools-only' } },
      {
        type: 'message_part',
        data: {
          runId: 'tools-only',
          chunk: { type: 'tool-input-available', toolCallId: 'c1', toolName: 'search', input: {} },
        },
      },
      { type: 'run_finished', data: { runId: 'tools-only', status: 'completed' } },
    ]);
    await w.say('a real question');
    const events = await w.waitFor(
      (all) => botRuns(w, all).length === 1 && finishedOf(w, all, botRuns(w, all)[0]!) !== undefined,
      { what: 'one answer' },
    );
    const started = events.find((e) => e.principalId === w.botId && e.type === 'run_started')!;
    expect(started.data.replyTo).toEqual([
      events.find((e) => e.data.runId !== 'tools-only' && e.principalId === 'alice')!.seq,
    ]);
    expect(w.double.requests.filter((r) => r.kind === 'main')).toHaveLength(1);
    expect(bot.logs.some((l) => l.msg === 'turn starts')).toBe(true);
  });
});

describe('who the bot answers', () => {
  it('respondTo "mentions" answers only turns that name it', async () => {
    world = await startScubaWorld({ script: [quick('', 'You called?')] });
    const w = world;
    w.startBot({ configPath: w.writeConfig({ turns: { respondTo: 'mentions' } }) });
    await w.say('just chatting with myself');
    await w.say('@bot-research are you listening?');
    const events = await w.waitFor(
      (all) => botRuns(w, all).length === 1 && finishedOf(w, all, botRuns(w, all)[0]!) !== undefined,
      { what: 'one answer' },
    );
    const mention = events.filter((e) => e.principalId === 'alice' && e.type === 'run_started')[1]!;
    expect(events.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.replyTo).toEqual([
      mention.seq,
    ]);
    expect(w.double.requests.filter((r) => r.kind === 'main')).toHaveLength(1);
  });

  it('respondTo "humans" leaves bots unanswered and answers people', async () => {
    world = await startScubaWorld({
      script: [{ name: 'any', reply: [{ type: 'text', text: 'For the humans.' }], times: 'always' }],
    });
    const w = world;
    const { token } = await w.alice.createBot({ principalId: 'bot-chatty', displayName: 'Chatty' });
    await w.alice.addParticipant(w.threadId, 'bot-chatty', 'member');
    const chatty = new BubbleClient({ url: w.server.url, token: token.token! });
    clients.push(chatty);
    const bot = w.startBot({ configPath: w.writeConfig({ turns: { respondTo: 'humans' } }) });
    await w.say('a bot speaking', undefined, chatty);
    const deadline = Date.now() + 20_000;
    while (!bot.logs.some((l) => l.msg === 'turn not answered' && l.reason === 'no_human') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(bot.logs.some((l) => l.msg === 'turn not answered' && l.reason === 'no_human')).toBe(true);
    await w.say('a human speaking');
    const events = await w.waitFor(
      (all) => botRuns(w, all).length === 1 && finishedOf(w, all, botRuns(w, all)[0]!) !== undefined,
      { what: 'the answer to the human' },
    );
    const human = events.filter((e) => e.principalId === 'alice' && e.type === 'run_started').at(-1)!;
    expect(events.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.replyTo).toEqual([
      human.seq,
    ]);
  });

  it('never answers more than maxBotOnlyTurns bot-only turns in a row', async () => {
    world = await startScubaWorld({
      script: [{ name: 'any', reply: [{ type: 'text', text: 'Reply.' }], times: 'always' }],
    });
    const w = world;
    const { token } = await w.alice.createBot({ principalId: 'bot-other', displayName: 'Other bot' });
    await w.alice.addParticipant(w.threadId, 'bot-other', 'member');
    const other = new BubbleClient({ url: w.server.url, token: token.token! });
    clients.push(other);
    const bot = w.startBot({ configPath: w.writeConfig({ turns: { maxBotOnlyTurns: 1 } }) });
    await w.say('ping one', undefined, other);
    await w.waitFor((all) => botRuns(w, all).length === 1 && finishedOf(w, all, botRuns(w, all)[0]!) !== undefined, {
      what: 'the first answer',
    });
    await w.say('ping two', undefined, other);
    const deadline = Date.now() + 20_000;
    while (
      !bot.logs.some((l) => l.msg === 'turn not answered' && l.reason === 'bot_only_limit') &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 50));
    expect(bot.logs.some((l) => l.msg === 'turn not answered' && l.reason === 'bot_only_limit')).toBe(true);
    expect(botRuns(w, await w.events())).toHaveLength(1);
    await w.say('a human again');
    const events = await w.waitFor((all) => botRuns(w, all).length === 2, { what: 'an answer to the human' });
    expect(botRuns(w, events)).toHaveLength(2);
  });
});
