import { appendRequestEvents, AppendRequestSchema, validateEventData } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { fastSingleEvent, isPlainTextDelta } from './append-fast-path.js';

const delta = (chunk: unknown, runId: unknown = 'r1') => ({ runId, chunk });
const long = 'x'.repeat(201);

/** Bodies the fast path must either parse exactly like the schema, or leave to it. */
const bodies: unknown[] = [
  { type: 'message_part', data: delta({ type: 'text-delta', id: 't1', delta: 'hi' }) },
  { type: 'message_part', data: delta({ type: 'text-delta', id: 't1', delta: 'hi' }), clientEventId: 'c-1', extra: 1 },
  { type: 'acme.poll', data: { a: 1 } },
  { type: 'x', data: {}, clientEventId: '' },
  { type: 'x', data: {}, clientEventId: long },
  { type: 'x', data: {}, clientEventId: 7 },
  { type: 'x', data: {}, clientEventId: null },
  { type: '', data: {} },
  { type: long, data: {} },
  { type: 5, data: {} },
  { type: 'x' },
  { type: 'x', data: null },
  { type: 'x', data: [1] },
  { type: 'x', data: 'text' },
  { type: 'x', data: {}, events: null },
  { type: 'x', data: {}, events: [{ type: 'y', data: {} }] },
  { events: [{ type: 'y', data: {} }] },
  { events: [] },
  [],
  null,
  'text',
  42,
];

/** `data` values for `message_part` that the fast check must accept only where the schema does. */
const datas: unknown[] = [
  delta({ type: 'text-delta', id: 't1', delta: '' }),
  delta({ type: 'text-delta', id: 't1', delta: 'a', extra: [1] }),
  { ...delta({ type: 'text-delta', id: 't1', delta: 'a' }), more: true },
  delta({ type: 'text-delta', id: '', delta: 'a' }),
  delta({ type: 'text-delta', id: 't1' }),
  delta({ type: 'text-delta', id: 't1', delta: 3 }),
  delta({ type: 'text-delta', id: 7, delta: 'a' }),
  delta({ type: 'text-delta', id: 't1', delta: 'a', providerMetadata: { a: { b: 1 } } }),
  delta({ type: 'text-delta', id: 't1', delta: 'a', providerMetadata: 'bad' }),
  delta({ type: 'text-delta', id: 't1', delta: 'a' }, ''),
  delta({ type: 'text-delta', id: 't1', delta: 'a' }, long),
  delta({ type: 'text-delta', id: 't1', delta: 'a' }, 9),
  delta({ type: 'text-start', id: 't1' }),
  delta(null),
  delta([]),
  { runId: 'r1' },
  null,
  [],
];

describe('fastSingleEvent', () => {
  it.each(bodies.map((body) => [JSON.stringify(body), body]))(
    'agrees with AppendRequestSchema on %s',
    (_name, body) => {
      const fast = fastSingleEvent(body);
      if (fast === null) return;
      const parsed = AppendRequestSchema.safeParse(body);
      expect(parsed.success).toBe(true);
      expect(appendRequestEvents(parsed.data!)).toStrictEqual([fast]);
    },
  );

  it('takes the common single event', () => {
    expect(fastSingleEvent(bodies[0])).not.toBeNull();
    expect(fastSingleEvent(bodies[1])).toStrictEqual({
      type: 'message_part',
      data: delta({ type: 'text-delta', id: 't1', delta: 'hi' }),
      clientEventId: 'c-1',
    });
  });
});

describe('isPlainTextDelta', () => {
  it.each(datas.map((data) => [JSON.stringify(data), data]))(
    'accepts only what validateEventData accepts: %s',
    (_name, data) => {
      if (isPlainTextDelta('message_part', data)) expect(validateEventData('message_part', data).ok).toBe(true);
    },
  );

  it('takes plain text deltas and nothing of another type', () => {
    expect(isPlainTextDelta('message_part', datas[0])).toBe(true);
    expect(isPlainTextDelta('message_part', datas[2])).toBe(true);
    expect(isPlainTextDelta('acme.message_part', datas[0])).toBe(false);
  });
});
