import { CLOSE_CODES, type Grant } from '@bubble/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { TestApi } from './ws-test-api.js';
import { type Frame, TestSocket } from './ws-test-client.js';
import { DEFAULT_PRESENCE_GRACE_MS } from './presence-fanout.js';

/**
 * protocol.md, "WebSocket" and the participants route: `online` on each grant while its principal
 * holds an authenticated WebSocket, and `presence` frames on the thread subscriptions of the
 * threads it is a participant of, when its first socket authenticates and its last one closes.
 * One real server on SQLite, real sockets.
 */
let server: TestServer;
let alice: TestApi;
let carol: TestApi;
let bot: { api: TestApi; tokenId: string };
let open: TestSocket[];

beforeEach(async () => {
  // A small socket bound, so a client that stops reading is a slow consumer quickly; frame limits
  // off, so that it is the bound that closes it.
  server = await startTestServer({ ws: { maxBufferedBytes: 64 * 1024 }, rateLimits: { frames: false } });
  alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
  carol = new TestApi(server.url, (await server.createHuman('carol')).token.token);
  const created = await alice.createBot('bot-research');
  bot = { api: new TestApi(server.url, created.token.token), tokenId: created.token.tokenId };
  open = [];
});

afterEach(async () => {
  for (const socket of open) socket.close();
  await server.stop();
});

async function connect(token: string): Promise<TestSocket> {
  const { socket } = await TestSocket.authenticated(server.wsUrl, token);
  open.push(socket);
  return socket;
}

/** A socket of `api` subscribed to each thread (subscription id `t0`, `t1`, … in order), past its backlog. */
async function watch(api: TestApi, ...threadIds: string[]): Promise<TestSocket> {
  const socket = await connect(api.token);
  for (const [i, threadId] of threadIds.entries()) {
    socket.send({ type: 'subscribe', id: `t${i}`, threadId, afterSeq: 0 });
    expect(await socket.next((f) => f.id === `t${i}`)).toMatchObject({ type: 'subscribed', id: `t${i}` });
  }
  // The backlog (participant_added, …) is behind us once a ping comes back.
  await socket.roundTrip();
  return socket;
}

const presenceOf = (frames: readonly Frame[]) => frames.filter((f) => f.type === 'presence');
const nextPresence = (socket: TestSocket, timeoutMs = DEFAULT_PRESENCE_GRACE_MS + 5_000) =>
  socket.next((f) => f.type === 'presence', timeoutMs);
/** Every frame that arrives over the grace and a round trip: nothing was held back. */
async function settle(socket: TestSocket): Promise<Frame[]> {
  await new Promise((r) => setTimeout(r, DEFAULT_PRESENCE_GRACE_MS + 300));
  return socket.roundTrip();
}

async function onlineOf(api: TestApi, threadId: string): Promise<Record<string, boolean>> {
  const { grants } = await api.call<{ grants: Array<Grant & { online: boolean }> }>(
    'GET',
    `/v1/threads/${threadId}/participants`,
  );
  return Object.fromEntries(grants.map((g) => [g.principalId, g.online]));
}

async function sharedThread(): Promise<string> {
  const thread = await alice.createThread({ title: 'research' });
  await alice.addParticipant(thread.threadId, 'bot-research');
  return thread.threadId;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 2_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the participants route', () => {
  it('says online: true while the principal holds an authenticated socket, false once it has none, at once', async () => {
    const threadId = await sharedThread();
    expect(await onlineOf(alice, threadId)).toEqual({ alice: false, 'bot-research': false });
    // A socket that has not authenticated yet is nobody's.
    const anonymous = await TestSocket.open(server.wsUrl);
    open.push(anonymous);
    expect(await onlineOf(alice, threadId)).toEqual({ alice: false, 'bot-research': false });

    const first = await connect(bot.api.token);
    const second = await connect(bot.api.token);
    expect(await onlineOf(alice, threadId)).toEqual({ alice: false, 'bot-research': true });
    first.close();
    await first.closed;
    expect((await onlineOf(alice, threadId))['bot-research']).toBe(true);
    const closedAt = Date.now();
    second.close();
    await second.closed;
    // The route never waits out the frames' grace.
    await until(
      async () => ((await onlineOf(alice, threadId))['bot-research'] === false ? true : undefined),
      'online: false',
    );
    expect(Date.now() - closedAt).toBeLessThan(DEFAULT_PRESENCE_GRACE_MS);
    // The caller's own socket counts like anyone's.
    await connect(alice.token);
    expect(await onlineOf(alice, threadId)).toEqual({ alice: true, 'bot-research': false });
  });
});

describe('presence frames', () => {
  it("tell a thread's subscriber a participant's first socket and its last one, once each", async () => {
    const threadId = await sharedThread();
    const watcher = await watch(alice, threadId);
    const first = await connect(bot.api.token);
    expect(await nextPresence(watcher)).toEqual({
      type: 'presence',
      id: 't0',
      principalId: 'bot-research',
      online: true,
    });
    const second = await connect(bot.api.token);
    first.close();
    expect(presenceOf(await settle(watcher))).toEqual([]);
    second.close();
    expect(await nextPresence(watcher)).toEqual({
      type: 'presence',
      id: 't0',
      principalId: 'bot-research',
      online: false,
    });
    expect(presenceOf(await settle(watcher))).toEqual([]);
  });

  it('reach only the threads the principal holds a live grant on: not a stranger, not a reader through the parent', async () => {
    const threadId = await sharedThread();
    const sub = await alice.createThread({ parentThreadId: threadId });
    const elsewhere = await carol.createThread({ title: "carol's" });
    await carol.addPerson(elsewhere.threadId, 'alice', alice);
    const watcher = await watch(alice, threadId, sub.threadId, elsewhere.threadId);
    // bot-research can read the subthread through its grant on the parent, but is no participant of it.
    expect(await onlineOf(alice, sub.threadId)).toEqual({ alice: true });

    await connect(bot.api.token);
    await connect(carol.token);
    const frames = presenceOf(await settle(watcher)).sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(frames).toEqual([
      { type: 'presence', id: 't0', principalId: 'bot-research', online: true },
      { type: 'presence', id: 't2', principalId: 'carol', online: true },
    ]);

    // A stranger to every thread alice watches reaches none of them.
    const dave = new TestApi(server.url, (await server.createHuman('dave')).token.token);
    const daves = await connect(dave.token);
    daves.close();
    expect(presenceOf(await settle(watcher))).toEqual([]);
  });

  it('count a socket the server closes: 4001, 4003 and 4008 each make the principal go offline', async () => {
    const threadId = await sharedThread();
    const watcher = await watch(alice, threadId);
    const told = async (online: boolean) =>
      expect(await nextPresence(watcher)).toMatchObject({ principalId: 'bot-research', online });

    // 4001: a second client.auth.
    let socket = await connect(bot.api.token);
    await told(true);
    socket.send({ type: 'client.auth', token: bot.api.token });
    expect((await socket.closed).code).toBe(CLOSE_CODES.notAuthenticated);
    await told(false);

    // 4003: its token revoked.
    socket = await connect(bot.api.token);
    await told(true);
    await alice.revokeToken('bot-research', bot.tokenId);
    expect((await socket.closed).code).toBe(CLOSE_CODES.credentialRevoked);
    await told(false);

    // 4008: a slow consumer (it never reads the answers to what it sends).
    const token = await alice.mintToken('bot-research');
    socket = await connect(token.token);
    await told(true);
    socket.ws.pause();
    for (let i = 0; i < 60_000 && socket.ws.readyState === socket.ws.OPEN; i += 1) socket.ws.send('{"type":"nope"}');
    socket.ws.resume();
    expect((await socket.closed).code).toBe(CLOSE_CODES.slowConsumer);
    await told(false);
    expect(await onlineOf(alice, threadId)).toMatchObject({ 'bot-research': false });
  });

  it('tell neither way a reconnect within the grace, and subscribing sends no snapshot', async () => {
    const threadId = await sharedThread();
    const before = await connect(bot.api.token);
    // Online before alice subscribed: she reads that from the participants route, not from a frame.
    const watcher = await watch(alice, threadId);
    expect(presenceOf(await settle(watcher))).toEqual([]);
    expect((await onlineOf(alice, threadId))['bot-research']).toBe(true);

    before.close();
    await before.closed;
    await connect(bot.api.token);
    expect(presenceOf(await settle(watcher))).toEqual([]);
    expect((await onlineOf(alice, threadId))['bot-research']).toBe(true);
  });

  it('announce a participant added while online on that thread, and say nothing when it is removed', async () => {
    await connect(bot.api.token);
    const thread = await alice.createThread({ title: 'later' });
    const watcher = await watch(alice, thread.threadId);
    await alice.addParticipant(thread.threadId, 'bot-research');
    const frames = await watcher.until((f) => f.type === 'presence');
    expect(frames.map((f) => f.type)).toEqual(['event', 'presence']);
    expect(frames[0]).toMatchObject({ event: { type: 'participant_added', data: { principalId: 'bot-research' } } });
    expect(frames[1]).toEqual({ type: 'presence', id: 't0', principalId: 'bot-research', online: true });

    await alice.removeParticipant(thread.threadId, 'bot-research');
    const after = await settle(watcher);
    expect(after.map((f) => f.type)).toEqual(['event']);
    expect(after[0]).toMatchObject({ event: { type: 'participant_removed' } });
  });
});
