import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CLIENT_FRAME_TYPES,
  ClientFrameSchema,
  ServerFrameSchema,
  type ClientFrame,
  type ClientFrameType,
  type PongFrame,
  type ServerFrameType,
  type SubscribeFrame,
} from './frames.js';

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

describe('ClientFrame (the type clients send by)', () => {
  // One frame of each type, keyed by its type: a new variant without an example fails the type check.
  const examples = {
    'client.auth': { type: 'client.auth', token: 'bubble_user_x' },
    subscribe: { type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 7 },
    subscribe_grants: { type: 'subscribe_grants', id: 'g1' },
    unsubscribe: { type: 'unsubscribe', id: 's1' },
    ping: { type: 'ping' },
  } satisfies { [K in ClientFrameType]: Extract<ClientFrame, { type: K }> };

  it('names exactly the types the schema accepts', () => {
    expectTypeOf<ClientFrameType>().toEqualTypeOf<(typeof CLIENT_FRAME_TYPES)[number]>();
    expect(Object.keys(examples).sort()).toEqual([...CLIENT_FRAME_TYPES].sort());
  });

  it.each(Object.values(examples))('%j survives the wire unchanged', (frame: ClientFrame) => {
    expect(ClientFrameSchema.parse(JSON.parse(JSON.stringify(frame)))).toEqual(frame);
  });

  it('types a subscribe with its afterSeq required, as clients always send it', () => {
    expectTypeOf<SubscribeFrame['afterSeq']>().toEqualTypeOf<number>();
    // @ts-expect-error a ping carries nothing else
    const bad: ClientFrame = { type: 'ping', id: 's1' };
    expect(bad.type).toBe('ping');
  });

  it('keeps server frames out of the client union', () => {
    expectTypeOf<Extract<ClientFrame, { type: ServerFrameType }>>().toBeNever();
    expectTypeOf<PongFrame>().not.toExtend<ClientFrame>();
  });
});
