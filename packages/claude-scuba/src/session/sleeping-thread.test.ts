import type { EventEnvelope } from '@bubble/protocol';
import { BubbleApiError } from '@bubble/sdk';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ClaudeSdkSession } from './claude-sdk-session.js';
import { SleepingThread, wakesSession } from './sleeping-thread.js';

const event = (seq: number, principalId: string, type = 'message_part', data: Record<string, unknown> = {}) =>
  ({ seq, principalId, type, data, threadId: 't', eventId: `e${seq}`, createdAt: '' }) as unknown as EventEnvelope;

function fakeSession() {
  const seen: number[] = [];
  const session = {
    droppable: true,
    stopped: [] as string[],
    onEvent: (e: EventEnvelope) => seen.push(e.seq),
    stop: async (reason: string) => {
      session.stopped.push(reason);
    },
  };
  return { session, seen };
}

function harness(options: { wasAwake?: boolean; failWakes?: number; failWith?: () => Error } = {}) {
  const awakeFlags = new Map<string, boolean>([['t', options.wasAwake ?? false]]);
  const settled: number[] = [];
  const made: Array<ReturnType<typeof fakeSession>> = [];
  const scans: number[] = [];
  let failures = options.failWakes ?? 0;
  const thread = new SleepingThread({
    threadId: 't',
    selfId: 'bot',
    store: { wasAwake: (id) => awakeFlags.get(id) ?? false, setAwake: (id, on) => awakeFlags.set(id, on) },
    wake: async (scanAfter) => {
      if (failures-- > 0) throw options.failWith?.() ?? new Error('server away');
      scans.push(scanAfter);
      const fake = fakeSession();
      made.push(fake);
      return fake.session as unknown as ClaudeSdkSession;
    },
    awake: () => undefined,
    asleep: () => undefined,
    settle: async (seq) => {
      settled.push(seq);
    },
    firstScanAfter: 1_500,
    idleMs: 60_000,
    logger: pino({ level: 'silent' }),
  });
  return { thread, awakeFlags, settled, made, scans };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('wakesSession', () => {
  it.each([
    [event(1, 'alice'), true],
    [event(1, 'other-bot'), true],
    [event(1, 'system', 'participant_added', { principalId: 'bot' }), true],
    [event(1, 'system', 'participant_added', { principalId: 'alice' }), false],
    [event(1, 'system', 'participant_removed', { principalId: 'alice' }), false],
    [event(1, 'system', 'artifact_updated', { name: 'x' }), false],
  ])('%# wakes: %s', (e, wakes) => {
    expect(wakesSession(e, 'bot')).toBe(wakes);
  });
});

describe('SleepingThread', () => {
  it('settles what no session needs, and makes the session on the first event one must see', async () => {
    const h = harness();
    await h.thread.start();
    expect(h.made).toHaveLength(0);
    await h.thread.onEvent(event(1_601, 'system', 'participant_added', { principalId: 'alice' }));
    expect(h.settled).toEqual([1_601]);
    expect(h.made).toHaveLength(0);
    await h.thread.onEvent(event(1_602, 'alice'));
    await h.thread.onEvent(event(1_603, 'system', 'participant_removed', { principalId: 'carol' }));
    expect(h.made).toHaveLength(1);
    // Awake, the session sees everything (the waking event first) and settles on its own.
    expect(h.made[0]!.seen).toEqual([1_602, 1_603]);
    expect(h.settled).toEqual([1_601]);
    // The first scan reads back a page from the checkpoint, not from the waking event.
    expect(h.scans).toEqual([500]);
    expect(h.awakeFlags.get('t')).toBe(true);
  });

  it('drops a session with nothing under way after idleMs, and the next wake reads back from there', async () => {
    const h = harness();
    await h.thread.onEvent(event(1_602, 'alice'));
    h.made[0]!.session.droppable = false;
    await vi.advanceTimersByTimeAsync(60_000);
    // Something under way: kept, and looked at again later.
    expect(h.thread.session).toBeDefined();
    h.made[0]!.session.droppable = true;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.thread.session).toBeUndefined();
    expect(h.thread.asleep).toBe(true);
    expect(h.made[0]!.session.stopped).toEqual(['idle']);
    expect(h.awakeFlags.get('t')).toBe(false);
    await h.thread.onEvent(event(5_000, 'alice'));
    expect(h.made).toHaveLength(2);
    expect(h.scans).toEqual([500, 3_999]);
  });

  it('wakes at once a thread that had a session when the bot last ran, trying once (the runtime retries)', async () => {
    const h = harness({ wasAwake: true });
    await h.thread.start();
    expect(h.made).toHaveLength(1);
    const failing = harness({ wasAwake: true, failWakes: 1 });
    await expect(failing.thread.start()).rejects.toThrow('server away');
    expect(failing.made).toHaveLength(0);
  });

  it('tries a failed wake again, holding the event until it works, and gives up when the thread stops', async () => {
    const h = harness({ failWakes: 2 });
    const delivered = h.thread.onEvent(event(1_602, 'alice'));
    await vi.advanceTimersByTimeAsync(5_000);
    await delivered;
    expect(h.made).toHaveLength(1);
    expect(h.made[0]!.seen).toEqual([1_602]);

    const stuck = harness({ failWakes: 1_000 });
    const pending = stuck.thread.onEvent(event(1_602, 'alice'));
    await vi.advanceTimersByTimeAsync(10_000);
    await stuck.thread.stop('revoked');
    await pending;
    expect(stuck.made).toHaveLength(0);
  });

  it('handles and settles nothing more of a thread whose wake is refused for good', async () => {
    const h = harness({
      failWakes: 1,
      failWith: () =>
        new BubbleApiError({ code: 'forbidden', status: 403, retryable: false, message: 'not a participant' }),
    });
    await h.thread.onEvent(event(1_602, 'alice'));
    await h.thread.onEvent(event(1_603, 'system', 'participant_removed', { principalId: 'carol' }));
    await h.thread.onEvent(event(1_604, 'alice'));
    expect(h.made).toHaveLength(0);
    expect(h.settled).toEqual([]);
  });

  it('stops its session with the runtime’s reason and keeps it marked awake', async () => {
    const h = harness();
    await h.thread.onEvent(event(1_602, 'alice'));
    await h.thread.stop('runtime_stopped');
    expect(h.made[0]!.session.stopped).toEqual(['runtime_stopped']);
    expect(h.awakeFlags.get('t')).toBe(true);
    await h.thread.onEvent(event(1_603, 'alice'));
    expect(h.made[0]!.seen).toEqual([1_602]);
  });
});
