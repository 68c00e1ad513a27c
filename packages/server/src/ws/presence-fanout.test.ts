import type { Grant } from '@bubble/protocol';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PresenceRegistry } from '../presence/presence-registry.js';
import { PresenceFanout } from './presence-fanout.js';

const grant = (threadId: string, principalId: string): Grant => ({
  threadId,
  principalId,
  role: 'member',
  grantedBy: 'alice',
  grantedAt: '2026-12-01T10:00:00.000Z',
  joinedSeq: 2,
  revokedAt: null,
});

let registry: PresenceRegistry;
let delivered: string[];
let grants: Map<string, Grant[]>;
/** The next grant read waits for this (so a test can hold one back) when set. */
let gate: Promise<void> | null;
let fanout: PresenceFanout;
/** The marks, as the hub takes them: each later than the last. */
let marks: number;
/** Late subscribers (beyond one per thread from the start), each with the mark it joined at. */
let late: { threadId: string; name: string; from: number }[];

beforeEach(() => {
  vi.useFakeTimers();
  registry = new PresenceRegistry();
  delivered = [];
  grants = new Map([['bot', [grant('th_a', 'bot'), grant('th_b', 'bot')]]]);
  gate = null;
  marks = 0;
  late = [];
  fanout = new PresenceFanout({
    registry,
    listLiveGrants: async (principalId) => {
      const held = gate;
      gate = null;
      if (held !== null) await held;
      return grants.get(principalId) ?? [];
    },
    // Every thread has one subscriber from the start (mark 0); `late` adds others, named in what they get.
    deliver: (threadId, principalId, online, at, joinedAfter = Number.NEGATIVE_INFINITY) => {
      if (0 < at && 0 >= joinedAfter) delivered.push(`${threadId} ${principalId} ${online}`);
      for (const one of late)
        if (one.threadId === threadId && one.from < at && one.from >= joinedAfter)
          delivered.push(`${one.name}: ${threadId} ${principalId} ${online}`);
    },
    mark: () => {
      marks += 1;
      return marks;
    },
    serving: () => true,
    graceMs: 500,
    logger: pino({ level: 'silent' }),
  });
});

afterEach(() => {
  fanout.close();
  vi.useRealTimers();
});

describe('PresenceFanout', () => {
  it("tells coming online at once and going offline after the grace, to the principal's threads", async () => {
    registry.setLocal('bot', true);
    await vi.advanceTimersByTimeAsync(0);
    expect(delivered).toEqual(['th_a bot true', 'th_b bot true']);
    registry.setLocal('bot', false);
    await vi.advanceTimersByTimeAsync(499);
    expect(delivered).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(delivered.slice(2)).toEqual(['th_a bot false', 'th_b bot false']);
  });

  it('tells neither way a principal back within the grace', async () => {
    registry.setLocal('bot', true);
    await vi.advanceTimersByTimeAsync(0);
    delivered.length = 0;
    registry.setLocal('bot', false);
    await vi.advanceTimersByTimeAsync(300);
    registry.setLocal('bot', true);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(delivered).toEqual([]);
  });

  it('tells who subscribed during the grace, and only them, that a principal came back', async () => {
    registry.setLocal('bot', true);
    await vi.advanceTimersByTimeAsync(0);
    delivered.length = 0;
    registry.setLocal('bot', false);
    await vi.advanceTimersByTimeAsync(100);
    // A new subscriber joins now: the participants route tells it the bot is offline.
    marks += 1;
    late.push({ threadId: 'th_a', name: 'late', from: marks });
    await vi.advanceTimersByTimeAsync(100);
    registry.setLocal('bot', true);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(delivered).toEqual(['late: th_a bot true']);
  });

  it('tells going offline to a subscriber that joined during the grace too', async () => {
    registry.setLocal('bot', true);
    await vi.advanceTimersByTimeAsync(0);
    delivered.length = 0;
    registry.setLocal('bot', false);
    await vi.advanceTimersByTimeAsync(100);
    marks += 1;
    late.push({ threadId: 'th_a', name: 'late', from: marks });
    await vi.advanceTimersByTimeAsync(400);
    expect(delivered).toEqual(['th_a bot false', 'late: th_a bot false', 'th_b bot false']);
  });

  it("keeps a principal's changes in order behind a slow read of its grants", async () => {
    let open: () => void = () => {};
    gate = new Promise((resolve) => {
      open = resolve;
    });
    registry.setLocal('bot', true);
    registry.setLocal('bot', false);
    await vi.advanceTimersByTimeAsync(500);
    expect(delivered).toEqual([]);
    open();
    await vi.advanceTimersByTimeAsync(0);
    expect(delivered).toEqual(['th_a bot true', 'th_b bot true', 'th_a bot false', 'th_b bot false']);
  });

  it('announces a grant added while its principal is online, or within its grace, on that thread only', async () => {
    fanout.grantAdded(grant('th_c', 'bot'));
    await vi.advanceTimersByTimeAsync(0);
    expect(delivered).toEqual([]);
    registry.setLocal('bot', true);
    await vi.advanceTimersByTimeAsync(0);
    delivered.length = 0;
    fanout.grantAdded(grant('th_c', 'bot'));
    await vi.advanceTimersByTimeAsync(0);
    expect(delivered).toEqual(['th_c bot true']);
    registry.setLocal('bot', false);
    fanout.grantAdded(grant('th_d', 'bot'));
    await vi.advanceTimersByTimeAsync(0);
    expect(delivered).toEqual(['th_c bot true', 'th_d bot true']);
  });

  it('reads no grants and sends nothing while no thread is served', async () => {
    const reads = vi.fn(async () => [grant('th_a', 'bot')]);
    fanout.close();
    fanout = new PresenceFanout({
      registry,
      listLiveGrants: reads,
      deliver: () => {
        throw new Error('nothing to deliver to');
      },
      mark: () => 0,
      serving: () => false,
      graceMs: 0,
      logger: pino({ level: 'silent' }),
    });
    registry.setLocal('bot', true);
    registry.setLocal('bot', false);
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).not.toHaveBeenCalled();
  });
});
