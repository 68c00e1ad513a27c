import { LIMITS } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { parseClientFrame } from './frame-codec.js';
import { subscribeBatchCost } from './subscribe-batch.js';

describe('subscribeBatchCost', () => {
  it.each([
    [1, 1],
    [9, 1],
    [10, 1],
    [11, 2],
    [101, 11],
    [LIMITS.maxSubscribeBatch, 100],
  ])('a batch of %i costs %i frames', (count, cost) => {
    expect(subscribeBatchCost(count)).toBe(cost);
  });
});

describe('parseClientFrame on a subscribe_batch', () => {
  it('parses each entry as a subscribe, in order, with its defaults', () => {
    const text = JSON.stringify({
      type: 'subscribe_batch',
      subscriptions: [
        { id: 's1', threadId: 'th_1', afterSeq: 3 },
        { id: 's2', threadId: 'th_2' },
      ],
    });
    expect(parseClientFrame(text)).toEqual({
      ok: true,
      frame: {
        type: 'subscribe_batch',
        entries: [
          { ok: true, frame: { type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 3 } },
          { ok: true, frame: { type: 'subscribe', id: 's2', threadId: 'th_2', afterSeq: 0 } },
        ],
      },
    });
  });

  it('turns a malformed entry into its own error, naming its id when readable, and keeps the others', () => {
    const text = JSON.stringify({
      type: 'subscribe_batch',
      subscriptions: [
        { id: 'bad', threadId: 'th_1', afterSeq: 1.5 },
        { id: 's2', threadId: 'th_2' },
        { threadId: 7 },
        null,
      ],
    });
    const parsed = parseClientFrame(text);
    if (!parsed.ok || parsed.frame.type !== 'subscribe_batch')
      throw new Error(`not a batch: ${JSON.stringify(parsed)}`);
    const [bad, good, noId, nothing] = parsed.frame.entries;
    expect(bad).toMatchObject({
      ok: false,
      id: 'bad',
      error: { code: 'invalid_request', message: expect.stringMatching(/^invalid subscribe_batch entry 0: afterSeq/) },
    });
    expect(good).toEqual({ ok: true, frame: { type: 'subscribe', id: 's2', threadId: 'th_2', afterSeq: 0 } });
    expect(noId).toMatchObject({ ok: false, error: { details: { index: 2 } } });
    expect(noId).not.toHaveProperty('id');
    expect(nothing).toMatchObject({ ok: false, error: { details: { index: 3 } } });
  });

  it.each([
    [{ type: 'subscribe_batch' }, 'must be an array'],
    [{ type: 'subscribe_batch', subscriptions: {} }, 'must be an array'],
    [{ type: 'subscribe_batch', subscriptions: [] }, 'is empty'],
    [
      {
        type: 'subscribe_batch',
        subscriptions: Array.from({ length: LIMITS.maxSubscribeBatch + 1 }, (_, i) => ({
          id: `s${i}`,
          threadId: 'th',
        })),
      },
      `at most ${LIMITS.maxSubscribeBatch} subscriptions per batch, this one has ${LIMITS.maxSubscribeBatch + 1}`,
    ],
  ])('refuses %j as a whole', (frame, messagePart) => {
    const parsed = parseClientFrame(JSON.stringify(frame));
    expect(parsed).toMatchObject({
      ok: false,
      error: {
        code: 'invalid_request',
        message: expect.stringContaining(messagePart),
        details: { type: 'subscribe_batch' },
      },
    });
    expect(parsed).not.toHaveProperty('id');
  });
});
