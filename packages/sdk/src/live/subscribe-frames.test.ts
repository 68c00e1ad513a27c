import { ClientFrameSchema, LIMITS, type SubscribeFrame } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { subscribeFrames } from './subscribe-frames.js';

const subscribes = (count: number): SubscribeFrame[] =>
  Array.from({ length: count }, (_, i) => ({ type: 'subscribe', id: `s${i + 1}`, threadId: `th_${i}`, afterSeq: i }));

describe('subscribeFrames', () => {
  it('sends nothing for nothing, and a lone subscribe as a plain subscribe', () => {
    expect(subscribeFrames([], true)).toEqual([]);
    expect(subscribeFrames(subscribes(1), true)).toEqual(subscribes(1));
  });

  it('sends several as one subscribe_batch, in order', () => {
    expect(subscribeFrames(subscribes(3), true)).toEqual([
      {
        type: 'subscribe_batch',
        subscriptions: [
          { id: 's1', threadId: 'th_0', afterSeq: 0 },
          { id: 's2', threadId: 'th_1', afterSeq: 1 },
          { id: 's3', threadId: 'th_2', afterSeq: 2 },
        ],
      },
    ]);
  });

  it(`cuts batches at ${LIMITS.maxSubscribeBatch}, each a frame the protocol accepts`, () => {
    const frames = subscribeFrames(subscribes(2 * LIMITS.maxSubscribeBatch + 2), true);
    expect(frames.map((frame) => (frame.type === 'subscribe_batch' ? frame.subscriptions.length : 1))).toEqual([
      LIMITS.maxSubscribeBatch,
      LIMITS.maxSubscribeBatch,
      2,
    ]);
    for (const frame of frames) expect(ClientFrameSchema.parse(frame)).toEqual(frame);
    const ids = frames.flatMap((frame) => (frame.type === 'subscribe_batch' ? frame.subscriptions : [frame]));
    expect(ids.map((entry) => entry.id)).toEqual(subscribes(2 * LIMITS.maxSubscribeBatch + 2).map((s) => s.id));
  });

  it('sends one subscribe each to a server that does not take batches', () => {
    expect(subscribeFrames(subscribes(3), false)).toEqual(subscribes(3));
  });
});
