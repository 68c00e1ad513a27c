import { writeFileSync } from 'node:fs';
import type { Script } from '@bubble/model-double';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { countAnswers, humanMessages, longestBotOnlyStreak, notExactlyOnce } from './support/answer-ledger.js';
import { startScubaWorld, type ScubaProcess, type ScubaWorld } from './support/scuba-world.js';
import { words } from './support/turn-helpers.js';

/**
 * A long randomized conversation (issue 12, "Done means"): three people, two
 * bots, asides, interrupts, approvals, and kill -9 restarts of each bot, then
 * the count from the thread's events: every person's message answered exactly
 * once by each bot, no run left open, bot-only turns within the limit.
 *
 * CI runs a short one. The full size:
 *   SOAK_MESSAGES=200 SOAK_KILLS=5 npx vitest run packages/claude-scuba/test/soak-exactly-once.test.ts
 */
const MESSAGES = Number(process.env.SOAK_MESSAGES ?? 36);
const KILLS = Number(process.env.SOAK_KILLS ?? 1);
const SEED = Number(process.env.SOAK_SEED ?? 12);
const MAX_BOT_ONLY = 3;

/** A small seeded generator, so a failing run can be replayed with SOAK_SEED. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const script: Script = [
  {
    name: 'tool',
    match: { text: 'please run' },
    reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'touch soak.txt', description: 'Do a little work' } }],
    times: 'always',
  },
  {
    name: 'after-tool',
    match: { toolResult: { name: 'Bash' } },
    reply: [{ type: 'text', text: 'Done with the tool.' }],
    times: 'always',
  },
  { name: 'story', match: { text: 'story' }, reply: [{ type: 'text', text: words(40), delayMs: 40 }], times: 'always' },
  { name: 'any', reply: [{ type: 'text', text: 'Noted.' }], times: 'always' },
];

let world: ScubaWorld | undefined;
const clients: BubbleClient[] = [];
afterAll(async () => {
  for (const client of clients.splice(0)) client.close();
  await world?.close();
});

describe('exactly once over a long randomized conversation', () => {
  it(`${MESSAGES} messages from 3 people, 2 bots, ${KILLS} kill -9 of each`, { timeout: 30 * 60_000 }, async () => {
    const rand = random(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    world = await startScubaWorld({ script });
    const w = world;
    const people: Record<string, BubbleClient> = { alice: w.alice };
    for (const [id, name] of [
      ['bob', 'Bob'],
      ['carol', 'Carol'],
    ] as const) {
      const { token } = await w.server.createHuman(id, name);
      await w.alice.addParticipant(w.threadId, id, 'member');
      people[id] = new BubbleClient({ url: w.server.url, token: token.token! });
      // A stranger to alice: they accept her invitation (protocol.md, Consent).
      await people[id].acceptInvitation(w.threadId);
      clients.push(people[id]);
    }
    const { token } = await w.alice.createBot({ principalId: 'bot-second', displayName: 'Second bot' });
    await w.alice.addParticipant(w.threadId, 'bot-second', 'member');
    const common = {
      turns: { maxBotOnlyTurns: MAX_BOT_ONLY },
      backlog: { maxReplay: 1000 },
      logger: { level: 'info' },
    };
    const bots: Record<
      string,
      { configPath: string; env?: Record<string, string>; proc?: ScubaProcess; kills: number }
    > = {
      [w.botId]: { configPath: w.writeConfig(common), kills: 0 },
      'bot-second': {
        configPath: w.writeConfig(
          {
            ...common,
            claude: { workspaceRoot: './workspaces-2', configDir: './claude-home-2', tools: ['Bash'] },
            store: { path: './state-2.db' },
          },
          'bot-second',
        ),
        env: { BOT_TOKEN: token.token! },
        kills: 0,
      },
    };
    const start = (id: string) => {
      const bot = bots[id]!;
      bot.proc = w.startBot({ configPath: bot.configPath, ...(bot.env ? { env: bot.env } : {}) });
    };
    for (const id of Object.keys(bots)) start(id);
    const isBot = (id: string) => id in bots;
    const isHuman = (id: string) => id in people;

    // Alice (owner of both bots) answers every approval request after a moment; people interrupt now and then.
    const answered = new Set<string>();
    const interrupted = new Set<string>();
    let approvals = 0;
    let interrupts = 0;
    let stopHelpers = false;
    const helpers = (async () => {
      while (!stopHelpers) {
        await sleep(150);
        const events = await w.events().catch(() => [] as EventEnvelope[]);
        for (const event of events) {
          const chunk = event.data.chunk as { type?: string; toolCallId?: string } | undefined;
          if (
            isBot(event.principalId) &&
            chunk?.type === 'tool-approval-request' &&
            chunk.toolCallId &&
            !answered.has(chunk.toolCallId)
          ) {
            answered.add(chunk.toolCallId);
            approvals += 1;
            await w.alice
              .appendEvent(w.threadId, {
                type: 'tool_call_approval',
                data: { toolCallId: chunk.toolCallId, decision: rand() < 0.8 ? 'allow' : 'deny' },
              })
              .catch(() => undefined);
          }
        }
        const open = openRuns(events, isBot);
        if (open.length > 0 && rand() < 0.04) {
          const runId = pick(open);
          if (!interrupted.has(runId)) {
            interrupted.add(runId);
            interrupts += 1;
            await people[pick(Object.keys(people))]!.appendEvent(w.threadId, {
              type: 'run_interrupt_requested',
              data: { runId, reason: 'soak' },
            }).catch(() => undefined);
          }
        }
      }
    })();

    // The conversation, with each bot killed -9 (and started again) KILLS times along the way, at spread-out moments.
    const killAt = new Map<number, string>();
    for (const id of Object.keys(bots))
      for (let k = 0; k < KILLS; k += 1)
        killAt.set(Math.floor(((k + 0.5 + (id === w.botId ? 0 : 0.3)) * MESSAGES) / (KILLS + 0.5)), id);
    const began = Date.now();
    for (let i = 0; i < MESSAGES; i += 1) {
      const who = pick(Object.keys(people));
      const kind = rand();
      const text =
        kind < 0.15 ? `please run something ${i}` : kind < 0.35 ? `tell me a story ${i}` : `message ${i} from ${who}`;
      await w.say(text, `h-${i}`, people[who]);
      const victim = killAt.get(i);
      if (victim) {
        await sleep(200 + rand() * 800);
        const bot = bots[victim]!;
        bot.proc!.child.kill('SIGKILL');
        await bot.proc!.exited;
        bot.kills += 1;
        await sleep(rand() * 500);
        start(victim);
      }
      await sleep(rand() < 0.3 ? 20 : 100 + rand() * 700);
    }

    // Quiet: every message of the people answered by both bots and every run closed, then nothing new for 5 s.
    const deadline = Date.now() + 10 * 60_000;
    let events: EventEnvelope[] = [];
    let lastHead = -1;
    for (;;) {
      await sleep(1000);
      events = await w.events();
      const messages = humanMessages(events, isHuman);
      const done = Object.keys(bots).every((id) => {
        const count = countAnswers(events, id, messages);
        return count.open.length === 0 && [...count.answers.values()].every((n) => n >= 1);
      });
      if (done && events.length === lastHead) break;
      lastHead = done ? events.length : -1;
      if (done) await sleep(4000);
      if (Date.now() > deadline) break;
    }
    stopHelpers = true;
    await helpers;

    const messages = humanMessages(events, isHuman);
    const report: Record<string, unknown> = {
      seed: SEED,
      messages: messages.length,
      seconds: Math.round((Date.now() - began) / 1000),
      approvals,
      interrupts,
    };
    for (const [id, bot] of Object.entries(bots)) {
      const count = countAnswers(events, id, messages);
      const logs = bot.proc!.logs;
      report[id] = {
        kills: bot.kills,
        answeredOnce: [...count.answers.values()].filter((n) => n === 1).length,
        notOnce: notExactlyOnce(count),
        open: count.open.length,
        runs: events.filter((e) => e.principalId === id && e.type === 'run_started').length,
        closedOnRestart: events.filter(
          (e) =>
            e.principalId === id &&
            e.type === 'run_finished' &&
            (e.data.error as { code?: string } | undefined)?.code === 'bot_restarted',
        ).length,
        foldedInto: events.filter(
          (e) => e.principalId === id && e.type === 'run_finished' && Array.isArray(e.data.replyTo),
        ).length,
        steeredByLastProcess: logs.filter((l) => l.msg === 'steering the running turn').length,
      };
    }
    report.longestBotOnlyStreak = longestBotOnlyStreak(events, isBot);
    console.log(`soak: ${JSON.stringify(report)}`);
    if (process.env.SOAK_DUMP) writeFileSync(process.env.SOAK_DUMP, JSON.stringify(events));

    expect(messages).toHaveLength(MESSAGES);
    for (const [id, bot] of Object.entries(bots)) {
      const count = countAnswers(events, id, messages);
      expect(bot.kills, id).toBe(KILLS);
      expect(notExactlyOnce(count), id).toEqual([]);
      expect(count.open, id).toEqual([]);
    }
    expect(report.longestBotOnlyStreak).toBeLessThanOrEqual(MAX_BOT_ONLY);
  });
});

function openRuns(events: readonly EventEnvelope[], isBot: (id: string) => boolean): string[] {
  const open = new Set<string>();
  for (const event of events) {
    if (!isBot(event.principalId) || typeof event.data.runId !== 'string') continue;
    if (event.type === 'run_started') open.add(event.data.runId);
    else if (event.type === 'run_finished') open.delete(event.data.runId);
  }
  return [...open];
}
