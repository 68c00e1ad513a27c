import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BubbleApiError, BubbleClient, type GrantUpdate, type LiveState } from '../src/index.js';
import { range, seqs, settle, take } from './support/live-helpers.js';
import { TcpProxy } from './support/tcp-proxy.js';

let server: TestServer;
let aliceToken: string;
let alice: BubbleClient;
let proxy: TcpProxy | undefined;
const clients: BubbleClient[] = [];

const FAST_RECONNECT = { reconnectBaseMs: 20, reconnectCapMs: 200 };

function client(token: string, live: ConstructorParameters<typeof BubbleClient>[0]['live'] = {}): BubbleClient {
  const made = new BubbleClient({ url: server.url, token, live: { ...FAST_RECONNECT, ...live } });
  clients.push(made);
  return made;
}

function viaProxy(p: TcpProxy): { wsUrl: string } {
  return { wsUrl: `ws://127.0.0.1:${p.port}/v1/ws` };
}

beforeAll(async () => {
  server = await startTestServer();
  aliceToken = (await server.createHuman('alice')).token.token;
  alice = new BubbleClient({ url: server.url, token: aliceToken });
});

afterEach(async () => {
  for (const made of clients.splice(0)) made.close();
  await proxy?.stop();
  proxy = undefined;
});

afterAll(async () => {
  alice?.close();
  await server?.stop();
});

async function appendNotes(threadId: string, count: number, by: BubbleClient = alice): Promise<void> {
  await by.appendEvents(
    threadId,
    Array.from({ length: count }, (_, i) => ({ type: 'test.note', data: { i } })),
  );
}

describe('thread subscriptions', () => {
  it('delivers the backlog after afterSeq, then live events, in order', async () => {
    const { thread } = await alice.createThread({ title: 'live' });
    await appendNotes(thread.threadId, 3); // seqs 2..4
    const reader = client(aliceToken);
    const subscription = reader.subscribeThread(thread.threadId, { afterSeq: 2 });
    const backlog = await take(subscription, 2);
    expect(seqs(backlog)).toEqual([3, 4]);
    await appendNotes(thread.threadId, 2);
    const live = await take(subscription, 2);
    expect(seqs(live)).toEqual([5, 6]);
    expect(live.map((e) => e.data.i)).toEqual([0, 1]);
    expect(subscription.lastDeliveredSeq).toBe(6);
  });

  it('multiplexes every subscription of a client over one WebSocket, and break unsubscribes', async () => {
    proxy = await TcpProxy.start(Number(new URL(server.url).port));
    const { thread: a } = await alice.createThread({ title: 'a' });
    const { thread: b } = await alice.createThread({ title: 'b' });
    const reader = client(aliceToken, viaProxy(proxy));
    const subA = reader.subscribeThread(a.threadId);
    const subB = reader.subscribeThread(b.threadId);
    const grants = reader.subscribeGrantsAsIterable();
    await appendNotes(a.threadId, 1);
    await appendNotes(b.threadId, 2);
    expect(seqs(await take(subA, 2))).toEqual([1, 2]);
    expect(seqs(await take(subB, 3))).toEqual([1, 2, 3]);
    await grants.whenSynced();
    expect(proxy.connections).toBe(1);

    // `break` in for-await ends one subscription; the others keep flowing on the same socket.
    await appendNotes(a.threadId, 1);
    for await (const event of subA) {
      expect(event.seq).toBe(3);
      break;
    }
    expect(subA.endReason).toEqual({ kind: 'unsubscribed' });
    await appendNotes(a.threadId, 1);
    await appendNotes(b.threadId, 1);
    expect(seqs(await take(subB, 1))).toEqual([4]);
    expect(proxy.connections).toBe(1);
    expect(await subA.next()).toEqual({ value: undefined, done: true });
  });

  it('answers an error for a thread the caller cannot read, as a typed error', async () => {
    const { thread } = await alice.createThread({ title: 'private' });
    const bob = await server.createHuman('bob-private');
    const reader = client(bob.token.token);
    const outcome = await settle(reader.subscribeThread(thread.threadId).next());
    expect(outcome.error).toBeInstanceOf(BubbleApiError);
    expect({ code: (outcome.error as BubbleApiError).code, status: (outcome.error as BubbleApiError).status }).toEqual({
      code: 'forbidden',
      status: 403,
    });
  });

  it('ends a subscription with a typed reason when access is revoked', async () => {
    const { thread } = await alice.createThread({ title: 'shared' });
    const carol = await server.createHuman('carol');
    await alice.addParticipant(thread.threadId, 'carol');
    const reader = client(carol.token.token);
    await reader.acceptInvitation(thread.threadId);
    const subscription = reader.subscribeThread(thread.threadId);
    expect(seqs(await take(subscription, 2))).toEqual([1, 2]);
    await alice.removeParticipant(thread.threadId, 'carol');
    const rest: number[] = [];
    for await (const event of subscription) rest.push(event.seq);
    // The removal itself (seq 3) may or may not reach carol before access ends; nothing after it does.
    expect(rest.every((seq) => seq === 3)).toBe(true);
    expect(subscription.endReason).toEqual({ kind: 'server', reason: 'grant_revoked' });
  });
});

describe('heartbeat', () => {
  it('notices a connection that went silent without closing, reconnects, and loses nothing', async () => {
    proxy = await TcpProxy.start(Number(new URL(server.url).port));
    const { thread } = await alice.createThread({ title: 'silent' });
    const states: LiveState[] = [];
    const reader = client(aliceToken, {
      ...viaProxy(proxy),
      heartbeatIntervalMs: 100,
      heartbeatTimeoutMs: 200,
      onStateChange: (state) => states.push(state),
    });
    const subscription = reader.subscribeThread(thread.threadId);
    expect(seqs(await take(subscription, 1))).toEqual([1]);
    proxy.freezeAll();
    await appendNotes(thread.threadId, 3); // seqs 2..4 happen while the link is dead
    const after = await take(subscription, 3);
    expect(seqs(after)).toEqual([2, 3, 4]);
    expect(proxy.connections).toBe(2);
    expect(states).toContain('waiting');
    await appendNotes(thread.threadId, 1);
    expect(seqs(await take(subscription, 1))).toEqual([5]);
  });
});

describe('terminal closes', () => {
  it('surfaces 4003 on token revocation as an unauthorized error on every iterable, without reconnecting', async () => {
    const { token } = await alice.createBot({ principalId: 'bot-revoked' });
    const { thread } = await alice.createThread({ title: 'bot thread' });
    await alice.addParticipant(thread.threadId, 'bot-revoked');
    const states: LiveState[] = [];
    const bot = client(token.token, { onStateChange: (state) => states.push(state) });
    const events = bot.subscribeThread(thread.threadId);
    const grants = bot.subscribeGrantsAsIterable();
    expect(seqs(await take(events, 2))).toEqual([1, 2]);
    expect((await take(grants, 1))[0]).toMatchObject({ change: 'added', grant: { threadId: thread.threadId } });

    await alice.revokeAllTokens('bot-revoked');
    for (const iterator of [events, grants] as AsyncIterator<unknown>[]) {
      const outcome = await settle(iterator.next());
      expect(outcome.error).toBeInstanceOf(BubbleApiError);
      const error = outcome.error as BubbleApiError;
      expect({
        code: error.code,
        status: error.status,
        closeCode: error.details.closeCode,
        reason: error.details.reason,
      }).toEqual({
        code: 'unauthorized',
        status: 401,
        closeCode: 4003,
        reason: 'credential_revoked',
      });
    }
    expect(bot.live().connectionState).toBe('failed');
    expect(states.filter((s) => s === 'connecting')).toHaveLength(1);
    // A new subscription on the same client fails at once with the same error.
    const late = await settle(bot.subscribeThread(thread.threadId).next());
    expect((late.error as BubbleApiError).details.closeCode).toBe(4003);
  });

  it('surfaces 4001 for a token the server never accepted', async () => {
    const stranger = client('bubble_user_unknown-token-unknown-token-unknown');
    const outcome = await settle(stranger.subscribeGrantsAsIterable().next());
    expect(outcome.error).toBeInstanceOf(BubbleApiError);
    expect((outcome.error as BubbleApiError).details.closeCode).toBe(4001);
    expect(stranger.live().connectionState).toBe('failed');
  });
});

describe('grants stream', () => {
  it('reports the snapshot, then live changes, then after a reconnect only what really changed', async () => {
    proxy = await TcpProxy.start(Number(new URL(server.url).port));
    const { token } = await alice.createBot({ principalId: 'bot-grants' });
    const { thread: kept } = await alice.createThread({ title: 'kept' });
    const { thread: dropped } = await alice.createThread({ title: 'dropped' });
    const { thread: liveAdded } = await alice.createThread({ title: 'live added' });
    const { thread: addedWhileAway } = await alice.createThread({ title: 'added while away' });
    await alice.addParticipant(kept.threadId, 'bot-grants');
    await alice.addParticipant(dropped.threadId, 'bot-grants');

    const bot = client(token.token, viaProxy(proxy));
    const grants = bot.subscribeGrantsAsIterable();
    const summary = (updates: GrantUpdate[]) => updates.map((u) => `${u.change} ${u.grant.threadId}`);
    expect(summary(await take(grants, 2)).sort()).toEqual(
      [`added ${dropped.threadId}`, `added ${kept.threadId}`].sort(),
    );
    await grants.whenSynced();

    await alice.addParticipant(liveAdded.threadId, 'bot-grants');
    expect(summary(await take(grants, 1))).toEqual([`added ${liveAdded.threadId}`]);

    // Cut the socket and keep the bot away while its grants change.
    proxy.refuse(true);
    proxy.cutAll();
    await alice.removeParticipant(dropped.threadId, 'bot-grants');
    await alice.addParticipant(addedWhileAway.threadId, 'bot-grants');
    const connectionsBefore = proxy.connections;
    proxy.refuse(false);

    expect(summary(await take(grants, 2))).toEqual([`revoked ${dropped.threadId}`, `added ${addedWhileAway.threadId}`]);
    expect(proxy.connections).toBe(connectionsBefore + 1);
    // Nothing else was reported: the next update is the next real change.
    await alice.removeParticipant(kept.threadId, 'bot-grants');
    expect(summary(await take(grants, 1))).toEqual([`revoked ${kept.threadId}`]);
    expect([...grants.current().keys()].sort()).toEqual([addedWhileAway.threadId, liveAdded.threadId].sort());
  });
});

describe('backpressure', () => {
  it('stops reading for a slow consumer, is closed with 4008, resumes from its last seq and loses nothing', async () => {
    const slowServer = await startTestServer({ ws: { maxBufferedBytes: 64 * 1024 } });
    try {
      const human = await slowServer.createHuman('slow');
      const writer = new BubbleClient({ url: slowServer.url, token: human.token.token });
      const codes: number[] = [];
      const reader = new BubbleClient({
        url: slowServer.url,
        token: human.token.token,
        live: {
          ...FAST_RECONNECT,
          bufferLimit: 50,
          onStateChange: (state, detail) => state === 'waiting' && detail.code !== undefined && codes.push(detail.code),
        },
      });
      clients.push(reader, writer);
      const { thread } = await writer.createThread({ title: 'flood' });
      const subscription = reader.subscribeThread(thread.threadId);
      expect(seqs(await take(subscription, 1))).toEqual([1]);
      // The consumer reads nothing while 16 000 events (about 16 MB) are appended live.
      const pad = 'x'.repeat(1000);
      for (let batch = 0; batch < 80; batch += 1) {
        await writer.appendEvents(
          thread.threadId,
          Array.from({ length: 200 }, () => ({ type: 'test.note', data: { pad } })),
        );
      }
      const rest = await take(subscription, 16_000);
      expect(seqs(rest)).toEqual(range(2, 16_001));
      expect(codes).toContain(4008);
    } finally {
      await slowServer.stop();
    }
  });
});
