import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { eventFramePrefix, serializeFrame } from './frame-codec.js';
import { JoinedFrames, LiveBatch } from './live-batch.js';
import { encodeTextFrame } from './ws-frame.js';

const event = (seq: number): EventEnvelope => ({
  id: `ev_${seq}`,
  threadId: 'th_1',
  seq,
  type: 'message_part',
  principalId: 'alice',
  data: { runId: 'r1', chunk: { type: 'text-delta', id: 't1', delta: `word ${seq} ✓` } },
  clientEventId: null,
  createdAt: '2026-12-01T10:00:00.000Z',
});

describe('LiveBatch', () => {
  it("frames each event as the subscription's `event` frame, the same bytes serializeFrame gives", () => {
    const batch = new LiveBatch([event(1), event(2)]);
    for (const id of ['s1', 'a "quoted" id']) {
      [1, 2].forEach((seq, index) => {
        expect(batch.frame(eventFramePrefix(id), index)).toEqual(
          encodeTextFrame(serializeFrame({ type: 'event', id, event: event(seq) })),
        );
      });
    }
  });

  it('encodes a frame once per subscription id and shares it; another id gets its own', () => {
    const batch = new LiveBatch([event(1)]);
    const s1 = batch.frame(eventFramePrefix('s1'), 0);
    expect(batch.frame(eventFramePrefix('s1'), 0)).toBe(s1);
    expect(batch.frame(eventFramePrefix('s2'), 0)).not.toBe(s1);
  });
});

describe('JoinedFrames', () => {
  it('joins the frames of a flush, and reuses the bytes for a socket with the very same frames queued', () => {
    const [a, b, c] = ['one', 'two', 'three'].map(encodeTextFrame) as [Buffer, Buffer, Buffer];
    const joined = new JoinedFrames();
    const first = joined.join([a, b], a.length + b.length);
    expect(first).toEqual(Buffer.concat([a, b]));
    expect(joined.join([a, b], a.length + b.length)).toBe(first);
    // Compared by identity (cheap), not by bytes: an equal copy is joined again.
    const other = joined.join([a, Buffer.from(b)], a.length + b.length);
    expect(other).not.toBe(first);
    expect(other).toEqual(first);
    expect(joined.join([a, c], a.length + c.length)).toEqual(Buffer.concat([a, c]));
  });
});
