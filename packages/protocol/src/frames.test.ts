import { describe, expect, it } from 'vitest';
import { ClientFrameSchema, ServerFrameSchema } from './frames.js';

describe('ClientFrameSchema', () => {
  it.each([
    [{ type: 'client.auth', token: 'bubble_user_x' }, true],
    [{ type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 0 }, true],
    [{ type: 'subscribe', id: 's1', threadId: 'th_1' }, true],
    [{ type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: -1 }, false],
    [{ type: 'subscribe', id: '', threadId: 'th_1', afterSeq: 0 }, false],
    [{ type: 'subscribe_grants', id: 'g' }, true],
    [{ type: 'unsubscribe', id: 's1' }, true],
    [{ type: 'ping' }, true],
    [{ type: 'pong' }, false],
    [{ token: 'x' }, false],
  ])('%j -> %s', (frame, ok) => {
    expect(ClientFrameSchema.safeParse(frame).success).toBe(ok);
  });
});

describe('ServerFrameSchema', () => {
  it('parses an event frame', () => {
    const frame = {
      type: 'event',
      id: 's1',
      event: {
        id: 'ev_1',
        threadId: 'th_1',
        seq: 1,
        type: 'acme.x',
        principalId: 'alice',
        data: {},
        clientEventId: null,
        createdAt: '2026-11-29T10:00:00.000Z',
      },
    };
    expect(ServerFrameSchema.parse(frame).type).toBe('event');
  });
});
