import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { ThreadLedger } from './thread-ledger.js';

let seq = 0;
const at = (principalId: string, type: string, data: Record<string, unknown>): EventEnvelope =>
  ({
    id: `ev${++seq}`,
    threadId: 't',
    seq,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: '2026-12-01T00:00:00Z',
  }) as EventEnvelope;
const say = (who: string, runId: string) => [
  at(who, 'run_started', { runId }),
  at(who, 'message_part', { runId, chunk: { type: 'text-delta', id: 't', delta: `${who} speaks` } }),
  at(who, 'run_finished', { runId, status: 'completed' }),
];
const reply = (bot: string, runId: string, replyTo: number[], finished: Record<string, unknown> = {}) => [
  at(bot, 'run_started', { runId, replyTo }),
  at(bot, 'run_finished', { runId, status: 'completed', ...finished }),
];

describe('ThreadLedger', () => {
  const bots = new Set(['me', 'other']);
  const ledger = () => new ThreadLedger({ selfId: 'me', isBot: (p) => bots.has(p) });

  it("knows what the bot answered: its run_started.replyTo and run_finished.replyTo, not another bot's", () => {
    seq = 0;
    const l = ledger();
    const alice = say('alice', 'a1');
    const bob = say('bob', 'b1');
    for (const e of [...alice, ...bob, ...reply('me', 'r1', [1], { replyTo: [4] }), ...reply('other', 'o1', [1])])
      l.observe(e);
    expect(l.answered([1])).toBe(true);
    expect(l.answered([4])).toBe(true);
    expect(l.answered([2, 3])).toBe(false);
    expect(l.ownOpenRuns).toEqual([]);
  });

  it('lists its own runs left open, and observes each seq once', () => {
    seq = 0;
    const l = ledger();
    const botSays = at('other', 'run_started', { runId: 'o1' });
    const started = at('me', 'run_started', { runId: 'r1', replyTo: [1] });
    l.observe(botSays);
    l.observe(started);
    expect(l.ownOpenRuns).toEqual(['r1']);
    expect(l.botOnlyStreak).toBe(1);
    // The same event again (a replay overlapping the read) changes nothing.
    l.observe(started);
    expect(l.botOnlyStreak).toBe(1);
    expect(l.lastSeq).toBe(2);
  });

  it('counts bot-only turns across bots; a person speaking resets; a turn is counted once', () => {
    seq = 0;
    const l = ledger();
    for (const e of say('alice', 'a1')) l.observe(e);
    for (const e of reply('me', 'r1', [1])) l.observe(e); // answers a person
    expect(l.botOnlyStreak).toBe(0);
    for (const e of reply('other', 'o1', [4])) l.observe(e); // answers me
    for (const e of reply('me', 'r2', [6])) l.observe(e); // answers other
    expect(l.botOnlyStreak).toBe(2);
    l.countBotTurn('me', 'r2', [6]);
    expect(l.botOnlyStreak).toBe(2);
    for (const e of say('bob', 'b1')) l.observe(e);
    expect(l.botOnlyStreak).toBe(0);
  });

  it('takes nothing from an event the protocol would refuse, and skips custom events', () => {
    seq = 0;
    const l = ledger();
    l.observe(at('me', 'run_started', { runId: 'r1', replyTo: ['1'] }));
    l.observe(at('me', 'acme.note', { runId: 'r2', replyTo: [1] }));
    expect([l.ownOpenRuns, l.answered([1]), l.lastSeq]).toEqual([[], false, 2]);
  });
});
