import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS } from '../http/rate-limiter.js';
import { healthzMs, httpCall } from '../testing/test-client.js';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { MAX_REFUSED_FRAMES_IN_A_ROW } from './connection.js';
import { TestApi } from './ws-test-api.js';
import { TestSocket, type Frame } from './ws-test-client.js';

/** WebSocket rate limits (protocol.md, "Limits"; issue 13 row 7) against the real server on loopback. */
let server: TestServer;
const sockets: TestSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await server.stop();
});

async function signedIn(token: string): Promise<TestSocket> {
  const { socket } = await TestSocket.authenticated(server.wsUrl, token);
  sockets.push(socket);
  return socket;
}

/** Sends `client.auth` and resolves with every frame the server sent and how it closed (for refusals). */
async function refusedAuth(token: string): Promise<{ frames: Frame[]; code: number }> {
  const socket = await TestSocket.open(server.wsUrl);
  sockets.push(socket);
  const frames: Frame[] = [];
  socket.ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8')) as Frame));
  socket.send({ type: 'client.auth', token });
  const { code } = await socket.closed;
  return { frames, code };
}

function expectRateLimitedFrame(frame: Frame | undefined, message: RegExp, id?: string): void {
  expect(frame).toEqual({
    type: 'error',
    ...(id === undefined ? {} : { id }),
    error: {
      code: 'rate_limited',
      message: expect.stringMatching(message),
      details: { retryAfterSeconds: expect.any(Number) },
    },
  });
  expect((frame!.error as { details: { retryAfterSeconds: number } }).details.retryAfterSeconds).toBeGreaterThanOrEqual(
    1,
  );
}

describe('failed client.auth per client address', () => {
  it('past the limit, an error frame rate_limited then 4008, shared with HTTP; tokens in use and /healthz are unaffected', async () => {
    server = await startTestServer({ rateLimits: { failedAuth: { perSecond: 0.01, burst: 3 } } });
    const alice = (await server.createHuman('alice')).token.token;
    const bob = (await server.createHuman('bob')).token.token;
    const aliceSocket = await signedIn(alice);
    const bad = `bubble_user_${'C'.repeat(43)}`;
    const plain = [];
    for (let i = 0; i < 3; i += 1) plain.push(await refusedAuth(bad));
    expect(plain.map((r) => [r.code, r.frames])).toEqual([
      [4001, []],
      [4001, []],
      [4001, []],
    ]);
    const limited = await refusedAuth(bad);
    expect(limited.code).toBe(4008);
    expect(limited.frames).toHaveLength(1);
    expectRateLimitedFrame(limited.frames[0], /^too many failed authentications from this address; retry in \d+ s$/);
    // A right token never used before needs a lookup, so it is refused too; HTTP shares the budget.
    expect((await refusedAuth(bob)).code).toBe(4008);
    expect((await httpCall(server.url, 'GET', '/v1/auth/whoami', { token: bad })).status).toBe(429);
    // A token in use keeps working, and the open socket never noticed.
    const second = await signedIn(alice);
    expect(await second.roundTrip()).toEqual([]);
    expect(await aliceSocket.roundTrip()).toEqual([]);
    expect(await healthzMs(server.url)).toBeLessThan(1_000);
  });
});

describe('frames per principal', () => {
  it('past the limit each frame gets an error rate_limited (with its id), and a socket that goes on is closed with 4008; all its sockets share the budget; another principal and /healthz are unaffected', async () => {
    // 20 frames, refilled one per 100 s: the client.auth is one of them.
    server = await startTestServer({ rateLimits: { frames: { perSecond: 0.01, burst: 20 } } });
    const alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
    const bob = (await server.createHuman('bob')).token.token;
    const thread = await alice.createThread({ title: 't' });
    const flooder = await signedIn(alice.token);
    const bobs = await signedIn(bob);
    for (let i = 0; i < 19; i += 1) flooder.send({ type: 'ping' });
    for (let i = 0; i < 19; i += 1) expect(await flooder.next()).toEqual({ type: 'pong' });
    // Over the budget: a subscribe is refused by id (a client knows which one to send again), a ping without one.
    flooder.send({ type: 'subscribe', id: 's1', threadId: thread.threadId, afterSeq: 0 });
    expectRateLimitedFrame(await flooder.next(), /^too many frames from alice; retry in \d+ s$/, 's1');
    flooder.send({ type: 'ping' });
    expectRateLimitedFrame(await flooder.next(), /too many frames/);
    // alice's other sockets draw from the same budget: a new one cannot even authenticate.
    const another = await refusedAuth(alice.token);
    expect(another.code).toBe(4008);
    expectRateLimitedFrame(another.frames[0], /too many frames from alice/);
    // Going on: after MAX_REFUSED_FRAMES_IN_A_ROW refusals in a row, 4008.
    for (let i = 0; i < MAX_REFUSED_FRAMES_IN_A_ROW + 10 && flooder.ws.readyState === WebSocket.OPEN; i += 1)
      flooder.send({ type: 'ping' });
    const closed = await flooder.closed;
    expect(closed.code).toBe(4008);
    expect(closed.reason).toMatch(/rate limited/);
    // Every refusal before the close was answered (two above, the rest from this loop).
    const refusals = flooder.pending().filter((frame) => frame.type === 'error');
    expect(refusals).toHaveLength(MAX_REFUSED_FRAMES_IN_A_ROW - 2);
    for (const frame of refusals) expectRateLimitedFrame(frame, /too many frames from alice/);
    // bob, and the server, did not notice.
    expect(await bobs.roundTrip()).toEqual([]);
    expect(await healthzMs(server.url)).toBeLessThan(1_000);
    // HTTP requests are a budget of their own.
    await alice.note(thread.threadId, 'still writing');
  });

  it("count a human's bots against the human: the second bot's socket shares the budget, another human's do not", async () => {
    server = await startTestServer({ rateLimits: { frames: { perSecond: 0.01, burst: 10 } } });
    const alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
    const bob = new TestApi(server.url, (await server.createHuman('bob')).token.token);
    const botOne = (await alice.createBot('bot-one')).token.token;
    const botTwo = (await alice.createBot('bot-two')).token.token;
    const bobsBot = (await bob.createBot('bot-bob')).token.token;
    // Each bot: client.auth and 4 pings, 10 frames in all.
    for (const token of [botOne, botTwo]) {
      const socket = await signedIn(token);
      for (let i = 0; i < 4; i += 1) expect(await socket.roundTrip()).toEqual([]);
    }
    const third = await refusedAuth(botTwo);
    expect(third.code).toBe(4008);
    expectRateLimitedFrame(
      third.frames[0],
      /^too many frames from bot-two \(counted with alice, who created it\); retry in \d+ s$/,
    );
    expect((await refusedAuth(alice.token)).code).toBe(4008);
    const bobs = await signedIn(bobsBot);
    for (let i = 0; i < 5; i += 1) expect(await bobs.roundTrip()).toEqual([]);
    expect(await healthzMs(server.url)).toBeLessThan(1_000);
  });
});

describe('defaults', () => {
  it('a server started with no rate-limit options limits frames per principal and failed client.auth per address', async () => {
    server = await startTestServer();
    const alice = (await server.createHuman('alice')).token.token;
    const bob = (await server.createHuman('bob')).token.token;
    const bobs = await signedIn(bob);
    const flooder = await signedIn(alice);
    // Pings well past the default burst, sent faster than it refills: some are refused, then 4008.
    const { burst } = DEFAULT_RATE_LIMITS.frames;
    const errors: Frame[] = [];
    flooder.ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as Frame;
      if (frame.type === 'error') errors.push(frame);
    });
    for (let i = 0; i < 3 * burst && flooder.ws.readyState === WebSocket.OPEN; i += 1) flooder.send({ type: 'ping' });
    expect((await flooder.closed).code).toBe(4008);
    expect(errors.length).toBeGreaterThan(0);
    expectRateLimitedFrame(errors[0], /too many frames from alice/);
    // Failed client.auth: the default burst of plain 4001s, then rate_limited and 4008.
    const codes: number[] = [];
    for (let i = 0; i < DEFAULT_RATE_LIMITS.failedAuth.burst + 10 && !codes.includes(4008); i += 1) {
      codes.push((await refusedAuth(`bubble_user_${'D'.repeat(43)}`)).code);
    }
    expect(codes.at(-1)).toBe(4008);
    expect(new Set(codes.slice(0, -1))).toEqual(new Set([4001]));
    expect(codes.length).toBeGreaterThan(DEFAULT_RATE_LIMITS.failedAuth.burst);
    expect(await bobs.roundTrip()).toEqual([]);
    expect(await healthzMs(server.url)).toBeLessThan(1_000);
  }, 30_000);
});
