import { describe, expect, expectTypeOf, it } from 'vitest';
import { LIMITS } from './limits.js';
import {
  CLIENT_FRAME_TYPES,
  ClientFrameSchema,
  ServerFrameSchema,
  type ClientFrame,
  type ClientFrameType,
  type PongFrame,
  type PresenceFrame,
  type ServerFrameType,
  type SubscribeBatchEntry,
  type SubscribeBatchFrame,
  type SubscribeFrame,
  type ServerFrame,
} from './frames.js';
import { GrantListResponseSchema, ParticipantListResponseSchema } from './thread.js';

describe('ClientFrameSchema', () => {
  it.each([
    [{ type: 'client.auth', token: 'bubble_user_x' }, true],
    [{ type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 0 }, true],
    [{ type: 'subscribe', id: 's1', threadId: 'th_1' }, true],
    [{ type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: -1 }, false],
    [{ type: 'subscribe', id: '', threadId: 'th_1', afterSeq: 0 }, false],
    [{ type: 'subscribe_batch', subscriptions: [{ id: 's1', threadId: 'th_1', afterSeq: 0 }] }, true],
    [
      {
        type: 'subscribe_batch',
        subscriptions: [
          { id: 's1', threadId: 'th_1' },
          { id: 's2', threadId: 'th_2' },
        ],
      },
      true,
    ],
    [{ type: 'subscribe_batch', subscriptions: [] }, false],
    [{ type: 'subscribe_batch' }, false],
    [{ type: 'subscribe_batch', subscriptions: { id: 's1', threadId: 'th_1' } }, false],
    // Each entry is held to what a subscribe frame's fields are.
    [{ type: 'subscribe_batch', subscriptions: [{ id: 's1', threadId: 'th_1', afterSeq: -1 }] }, false],
    [{ type: 'subscribe_batch', subscriptions: [{ id: '', threadId: 'th_1' }] }, false],
    [{ type: 'subscribe_batch', subscriptions: [{ id: 's1' }] }, false],
    [{ type: 'subscribe_batch', subscriptions: [{ id: 's1', threadId: 'th_1' }, 'th_2'] }, false],
    [{ type: 'subscribe_grants', id: 'g' }, true],
    [{ type: 'unsubscribe', id: 's1' }, true],
    [{ type: 'ping' }, true],
    [{ type: 'pong' }, false],
    [{ token: 'x' }, false],
  ])('%j -> %s', (frame, ok) => {
    expect(ClientFrameSchema.safeParse(frame).success).toBe(ok);
  });
});

describe('SubscribeBatchFrame', () => {
  const entries = (count: number): SubscribeBatchEntry[] =>
    Array.from({ length: count }, (_, i) => ({ id: `s${i}`, threadId: `th_${i}`, afterSeq: i }));

  it(`carries 1 to ${LIMITS.maxSubscribeBatch} subscriptions, a full socket's worth`, () => {
    expect(LIMITS.maxSubscribeBatch).toBe(LIMITS.maxSubscriptionsPerSocket);
    const full: SubscribeBatchFrame = { type: 'subscribe_batch', subscriptions: entries(LIMITS.maxSubscribeBatch) };
    expect(ClientFrameSchema.parse(JSON.parse(JSON.stringify(full)))).toEqual(full);
    const over = { type: 'subscribe_batch', subscriptions: entries(LIMITS.maxSubscribeBatch + 1) };
    expect(ClientFrameSchema.safeParse(over).success).toBe(false);
  });

  it("gives each entry a subscribe frame's defaults and types (afterSeq 0 when absent)", () => {
    const parsed = ClientFrameSchema.parse({
      type: 'subscribe_batch',
      subscriptions: [{ id: 's1', threadId: 'th_1' }],
    });
    expect(parsed).toEqual({ type: 'subscribe_batch', subscriptions: [{ id: 's1', threadId: 'th_1', afterSeq: 0 }] });
    expectTypeOf<SubscribeBatchEntry>().toEqualTypeOf<Omit<SubscribeFrame, 'type'>>();
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

  it.each([
    [{ type: 'presence', id: 's1', principalId: 'bot-research', online: true }, true],
    [{ type: 'presence', id: 's1', principalId: 'bot-research', online: false }, true],
    [{ type: 'presence', id: 's1', principalId: 'bot-research' }, false],
    [{ type: 'presence', id: 's1', principalId: 'bot-research', online: 'yes' }, false],
    [{ type: 'presence', id: 's1', principalId: '', online: true }, false],
    [{ type: 'presence', principalId: 'bot-research', online: true }, false],
  ])('presence %j -> %s', (frame, ok) => {
    expect(ServerFrameSchema.safeParse(frame).success).toBe(ok);
  });

  it('types a presence frame as protocol.md writes it, and keeps it out of the client union', () => {
    const frame: PresenceFrame = { type: 'presence', id: 's1', principalId: 'bot-research', online: true };
    expect(ServerFrameSchema.parse(JSON.parse(JSON.stringify(frame)))).toEqual(frame);
    expectTypeOf<Extract<ServerFrame, { type: 'presence' }>>().toEqualTypeOf<PresenceFrame>();
    expect(ClientFrameSchema.safeParse(frame).success).toBe(false);
  });
});

describe('ParticipantListResponseSchema', () => {
  const grant = {
    threadId: 'th_1',
    principalId: 'bot-research',
    role: 'member',
    grantedBy: 'alice',
    grantedAt: '2026-11-29T10:00:00.000Z',
    joinedSeq: 40,
    revokedAt: null,
  };

  it('keeps `online` on each grant, and needs it', () => {
    const body = { grants: [{ ...grant, online: true }] };
    expect(ParticipantListResponseSchema.parse(body)).toEqual(body);
    expect(ParticipantListResponseSchema.safeParse({ grants: [grant] }).success).toBe(false);
    // The plain grant list (`GET /v1/grants`) has no presence.
    expect(GrantListResponseSchema.parse(body).grants[0]).not.toHaveProperty('online');
  });
});

describe('ClientFrame (the type clients send by)', () => {
  // One frame of each type, keyed by its type: a new variant without an example fails the type check.
  const examples = {
    'client.auth': { type: 'client.auth', token: 'bubble_user_x' },
    subscribe: { type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 7 },
    subscribe_batch: {
      type: 'subscribe_batch',
      subscriptions: [
        { id: 's2', threadId: 'th_1', afterSeq: 0 },
        { id: 's3', threadId: 'th_2.sub-x', afterSeq: 12 },
      ],
    },
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
