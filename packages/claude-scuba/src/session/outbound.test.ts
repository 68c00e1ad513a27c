import { BubbleApiError } from '@bubble/sdk';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { BubbleEventDraft } from '../translate/bubble-draft.js';
import { FakeClock } from '../testing/fake-clock.js';
import { mergeDeltas, ThreadAppender } from './outbound.js';

const d = (id: string, delta: string, n: number, type = 'text-delta'): BubbleEventDraft =>
  ({
    type: 'message_part',
    data: { runId: 'r', chunk: { type, id, delta } },
    clientEventId: `r:${n}`,
  }) as BubbleEventDraft;
const end = (n: number): BubbleEventDraft => ({
  type: 'message_part',
  data: { runId: 'r', chunk: { type: 'text-end', id: 'a' } },
  clientEventId: `r:${n}`,
});

describe('mergeDeltas', () => {
  it('merges adjacent deltas of one block into the first, keeping its id, and nothing else', () => {
    const input = [
      d('a', 'x', 1),
      d('a', 'y', 2),
      d('b', 'z', 3),
      d('b', 'w', 4, 'reasoning-delta'),
      end(5),
      d('a', 'q', 6),
    ];
    const out = mergeDeltas(input);
    expect(out.map((e) => [e.clientEventId, (e.data as { chunk: { delta?: string } }).chunk.delta ?? null])).toEqual([
      ['r:1', 'xy'],
      ['r:3', 'z'],
      ['r:4', 'w'],
      ['r:5', null],
      ['r:6', 'q'],
    ]);
    expect((input[0]!.data as { chunk: { delta: string } }).chunk.delta).toBe('x');
  });
});

describe('ThreadAppender', () => {
  it('keeps one append in flight; what piles up meanwhile goes out merged, in order', async () => {
    const calls: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const appender = new ThreadAppender(
      'th',
      async (_thread, events) => {
        calls.push(events.map((e) => String((e.data as { chunk?: { delta?: string } }).chunk?.delta ?? e.type)));
        if (calls.length === 1) await gate;
      },
      pino({ level: 'silent' }),
    );
    appender.enqueue([d('a', '1', 1)]);
    appender.enqueue([d('a', '2', 2)]);
    appender.enqueue([d('a', '3', 3), end(4)]);
    release();
    await appender.idle();
    expect(calls).toEqual([['1'], ['23', 'message_part']]);
    expect(appender.appends).toBe(2);
  });

  it('a refused batch is counted and dropped; the next one still goes', async () => {
    let n = 0;
    const appender = new ThreadAppender(
      'th',
      async () => {
        n += 1;
        if (n === 1) throw new Error('409 run already finished');
      },
      pino({ level: 'silent' }),
    );
    appender.enqueue([d('a', '1', 1)]);
    await appender.idle();
    appender.enqueue([d('a', '2', 2)]);
    await appender.idle();
    expect([appender.appends, appender.failed]).toEqual([2, 1]);
  });
});

describe('ThreadAppender retries', () => {
  const down = () =>
    new BubbleApiError({ code: 'network', status: 0, retryable: true, message: 'connect ECONNREFUSED' });

  it('keeps a batch while the server is away and sends it, in order, when it is back', async () => {
    const clock = new FakeClock();
    const sent: string[][] = [];
    let failures = 3;
    const appender = new ThreadAppender(
      'th',
      async (_thread, events) => {
        if (failures-- > 0) throw down();
        sent.push(events.map((e) => e.clientEventId!));
      },
      pino({ level: 'silent' }),
      clock,
    );
    appender.enqueue([d('a', '1', 1)]);
    appender.enqueue([d('b', '2', 2)]);
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(30_000);
    }
    await appender.idle();
    expect(sent).toEqual([['r:1'], ['r:2']]);
    expect(appender.failed).toBe(0);
  });

  it('drops a batch the server refuses (not retryable) and goes on', async () => {
    const sent: string[] = [];
    const appender = new ThreadAppender(
      'th',
      async (_thread, events) => {
        if (events[0]!.clientEventId === 'r:1')
          throw new BubbleApiError({ code: 'conflict', status: 409, retryable: false, message: 'run finished' });
        sent.push(events[0]!.clientEventId!);
      },
      pino({ level: 'silent' }),
      new FakeClock(),
    );
    appender.enqueue([d('a', '1', 1)]);
    await appender.idle();
    appender.enqueue([d('a', '2', 2)]);
    await appender.idle();
    expect([sent, appender.failed]).toEqual([['r:2'], 1]);
  });

  it('stops retrying when told (the session is stopping)', async () => {
    const appender = new ThreadAppender(
      'th',
      async () => Promise.reject(down()),
      pino({ level: 'silent' }),
      new FakeClock(),
    );
    appender.enqueue([d('a', '1', 1)]);
    await new Promise((resolve) => setImmediate(resolve));
    appender.stopRetrying();
    await appender.idle();
    expect(appender.failed).toBe(1);
  });
});
