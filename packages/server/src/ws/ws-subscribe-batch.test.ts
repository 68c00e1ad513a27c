import { afterEach, describe, expect, it } from 'vitest';
import { LIMITS, type EventEnvelope } from '@bubble/protocol';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { MAX_SUBSCRIPTIONS_PER_SOCKET } from './connection.js';
import { TestApi } from './ws-test-api.js';
import { TestSocket, type Frame } from './ws-test-client.js';

/** `subscribe_batch` (issue 19) against the real server on loopback, with a real WebSocket. */
let server: TestServer;
let alice: TestApi;
let bob: TestApi;
const sockets: TestSocket[] = [];

async function start(options: Parameters<typeof startTestServer>[0] = {}): Promise<void> {
  server = await startTestServer(options);
  alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
  bob = new TestApi(server.url, (await server.createHuman('bob')).token.token);
}

async function signedIn(token: string): Promise<TestSocket> {
  const { socket } = await TestSocket.authenticated(server.wsUrl, token);
  sockets.push(socket);
  return socket;
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await server.stop();
});

type Entry = { id: string; threadId: string; afterSeq?: number };
const batch = (subscriptions: unknown[]) => ({ type: 'subscribe_batch', subscriptions });
const notes = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => ({ type: 'test.note', data: { text: `${prefix}${i}` } }));
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Every frame, in order, until `done` holds for what was received. */
async function collect(socket: TestSocket, done: (frames: Frame[]) => boolean, timeoutMs = 20_000): Promise<Frame[]> {
  const frames: Frame[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(frames)) frames.push(await socket.next(() => true, Math.max(1, deadline - Date.now())));
  return frames;
}

const ofType = (frames: Frame[], type: string) => frames.filter((frame) => frame.type === type);
const answered = (frames: Frame[]) => frames.filter((frame) => frame.type === 'subscribed' || frame.type === 'error');
const seqsOf = (frames: Frame[], id: string) =>
  frames
    .filter((frame) => frame.type === 'event' && frame.id === id)
    .map((frame) => (frame.event as EventEnvelope).seq);
/** Done once `count` subscriptions are answered (`subscribed` or `error`). */
const answers = (count: number) => (frames: Frame[]) => answered(frames).length >= count;

describe('subscribe_batch', () => {
  it('is answered as that many subscribes in that order, each by its own id; each entry gets its backlog then live events, no gap, no duplicate', async () => {
    await start();
    const one = await alice.createThread({ title: 'one' });
    const two = await alice.createThread({ title: 'two' });
    const three = await alice.createThread({ title: 'three' });
    await alice.append(one.threadId, notes(250, 'a')); // seqs 2..251: more than one backlog page
    await alice.append(three.threadId, notes(3, 'c')); // seqs 2..4
    const socket = await signedIn(alice.token);
    const entries: Entry[] = [
      { id: 'a', threadId: one.threadId, afterSeq: 2 },
      { id: 'b', threadId: two.threadId },
      { id: 'c', threadId: three.threadId, afterSeq: 4 },
      { id: 'd', threadId: one.threadId, afterSeq: 0 },
    ];
    socket.send(batch(entries));
    const backlog = await collect(
      socket,
      (frames) =>
        seqsOf(frames, 'a').at(-1) === 251 && seqsOf(frames, 'd').at(-1) === 251 && seqsOf(frames, 'b').length === 1,
    );
    expect(ofType(backlog, 'subscribed')).toEqual([
      { type: 'subscribed', id: 'a', headSeq: 251 },
      { type: 'subscribed', id: 'b', headSeq: 1 },
      { type: 'subscribed', id: 'c', headSeq: 4 },
      { type: 'subscribed', id: 'd', headSeq: 251 },
    ]);
    expect(ofType(backlog, 'error')).toEqual([]);
    // Live: appended after every entry caught up, each gets what is after its own afterSeq.
    await alice.append(one.threadId, notes(2, 'x')); // 252, 253
    await alice.append(three.threadId, notes(2, 'y')); // 5, 6
    await alice.append(two.threadId, notes(1, 'z')); // 2
    const live = await collect(
      socket,
      (frames) =>
        seqsOf(frames, 'a').at(-1) === 253 &&
        seqsOf(frames, 'd').at(-1) === 253 &&
        seqsOf(frames, 'c').at(-1) === 6 &&
        seqsOf(frames, 'b').at(-1) === 2,
    );
    const all = [...backlog, ...live, ...(await socket.roundTrip())];
    expect(seqsOf(all, 'a')).toEqual(range(3, 253));
    expect(seqsOf(all, 'b')).toEqual([1, 2]);
    expect(seqsOf(all, 'c')).toEqual([5, 6]);
    expect(seqsOf(all, 'd')).toEqual(range(1, 253));
    for (const frame of ofType(all, 'event')) {
      const expected = { a: one, b: two, c: three, d: one }[frame.id as 'a' | 'b' | 'c' | 'd'];
      expect((frame.event as EventEnvelope).threadId).toBe(expected.threadId);
    }
  });

  it('refuses a duplicate id (of a live subscription, or twice in the batch) and a thread without read access, entry by entry; the rest proceed', async () => {
    await start();
    const thread = await alice.createThread();
    const secret = await bob.createThread();
    const socket = await signedIn(alice.token);
    socket.send({ type: 'subscribe', id: 'x', threadId: thread.threadId, afterSeq: 1 });
    expect(await socket.next()).toEqual({ type: 'subscribed', id: 'x', headSeq: 1 });
    socket.send(
      batch([
        { id: 'x', threadId: thread.threadId },
        { id: 'y', threadId: thread.threadId, afterSeq: 1 },
        { id: 'y', threadId: thread.threadId },
        { id: 'no', threadId: secret.threadId },
        { id: 'z', threadId: thread.threadId, afterSeq: 1 },
      ]),
    );
    const frames = await collect(socket, answers(5));
    const summary = answered(frames).map((frame) => [frame.type, frame.id, (frame.error as { code?: string })?.code]);
    // Refused at once, in entry order, as separate subscribe frames would be; the rest once their reads answer.
    expect(summary.slice(0, 2)).toEqual([
      ['error', 'x', 'conflict'],
      ['error', 'y', 'conflict'],
    ]);
    expect(summary.slice(2)).toEqual(
      expect.arrayContaining([
        ['subscribed', 'y', undefined],
        ['error', 'no', 'forbidden'],
        ['subscribed', 'z', undefined],
      ]),
    );
    // x kept its first subscription; y and z are live, and nothing of bob's thread arrives.
    const event = await alice.note(thread.threadId, 'hello');
    await bob.note(secret.threadId, 'secret');
    const live = await collect(socket, (got) => ofType(got, 'event').length === 3);
    expect(live.map((frame) => frame.id).sort()).toEqual(['x', 'y', 'z']);
    for (const frame of live) expect(frame).toEqual({ type: 'event', id: frame.id, event });
    expect(await socket.roundTrip()).toEqual([]);
  });

  it('answers a malformed entry with an error naming its id when it has one; the others proceed', async () => {
    await start();
    const thread = await alice.createThread();
    const socket = await signedIn(alice.token);
    socket.send(
      batch([
        { id: 'ok1', threadId: thread.threadId },
        { id: 'bad', threadId: thread.threadId, afterSeq: -1 },
        { threadId: thread.threadId },
        'th_not_an_entry',
        { id: 'ok2', threadId: thread.threadId, afterSeq: 1 },
      ]),
    );
    const frames = await collect(
      socket,
      (got) =>
        ofType(got, 'subscribed').length === 2 && ofType(got, 'error').length === 3 && seqsOf(got, 'ok1').length === 1,
    );
    const errors = ofType(frames, 'error');
    expect(errors[0]).toMatchObject({
      id: 'bad',
      error: {
        code: 'invalid_request',
        message: expect.stringMatching(/^invalid subscribe_batch entry 1: afterSeq/),
        details: { type: 'subscribe_batch', index: 1 },
      },
    });
    for (const [error, index] of [
      [errors[1], 2],
      [errors[2], 3],
    ] as const) {
      expect(error).not.toHaveProperty('id');
      expect(error).toMatchObject({ error: { code: 'invalid_request', details: { index } } });
    }
    expect(ofType(frames, 'subscribed').map((frame) => frame.id)).toEqual(['ok1', 'ok2']);
    expect(seqsOf(frames, 'ok1')).toEqual([1]);
    expect(seqsOf(frames, 'ok2')).toEqual([]);
  });

  it(`refuses a batch of more than ${LIMITS.maxSubscribeBatch} (or of none) as a whole, with one clear error, and keeps the socket`, async () => {
    await start();
    const thread = await alice.createThread();
    const socket = await signedIn(alice.token);
    const entries = range(0, LIMITS.maxSubscribeBatch).map((i) => ({ id: `s${i}`, threadId: thread.threadId }));
    socket.send(batch(entries));
    expect(await socket.roundTrip()).toEqual([
      {
        type: 'error',
        error: {
          code: 'invalid_request',
          message: `invalid subscribe_batch frame: at most ${LIMITS.maxSubscribeBatch} subscriptions per batch, this one has ${LIMITS.maxSubscribeBatch + 1}; send the rest in another frame`,
          details: { type: 'subscribe_batch', limit: LIMITS.maxSubscribeBatch, count: LIMITS.maxSubscribeBatch + 1 },
        },
      },
    ]);
    socket.send(batch([]));
    socket.send({ type: 'subscribe_batch' });
    const refusals = await socket.roundTrip();
    expect(refusals).toHaveLength(2);
    for (const frame of refusals) expect(frame).toMatchObject({ type: 'error', error: { code: 'invalid_request' } });
    // Nothing of it was subscribed: the ids are free, and the full batch is accepted.
    socket.send(batch(entries.slice(0, LIMITS.maxSubscribeBatch)));
    const frames = await collect(
      socket,
      (got) => ofType(got, 'subscribed').length === LIMITS.maxSubscribeBatch,
      30_000,
    );
    expect(ofType(frames, 'error')).toEqual([]);
  });

  it(`holds a socket to ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions across batches and single subscribes, refusing just the entries past it`, async () => {
    await start();
    const thread = await alice.createThread();
    const socket = await signedIn(alice.token);
    const entry = (id: string) => ({ id, threadId: thread.threadId, afterSeq: 1 });
    for (let i = 0; i < 5; i += 1) socket.send({ type: 'subscribe', ...entry(`single${i}`) });
    socket.send({ type: 'subscribe_grants', id: 'grants' });
    // 994 fit beside the 6 above; the last 2 of the batch do not.
    socket.send(batch(range(0, 995).map((i) => entry(`b${i}`))));
    const first = await collect(
      socket,
      (got) =>
        ofType(got, 'subscribed').length === MAX_SUBSCRIPTIONS_PER_SOCKET - 1 && ofType(got, 'error').length === 2,
      30_000,
    );
    const cap = { code: 'invalid_request', details: { limit: MAX_SUBSCRIPTIONS_PER_SOCKET } };
    expect(ofType(first, 'error')).toEqual([
      expect.objectContaining({ id: 'b994', error: expect.objectContaining(cap) }),
      expect.objectContaining({ id: 'b995', error: expect.objectContaining(cap) }),
    ]);
    // Full: a single subscribe is refused too, and a batch entirely.
    socket.send({ type: 'subscribe', ...entry('late') });
    socket.send(batch([entry('late1'), entry('late2')]));
    const full = await socket.roundTrip();
    expect(full.map((frame) => [frame.type, frame.id])).toEqual([
      ['error', 'late'],
      ['error', 'late1'],
      ['error', 'late2'],
    ]);
    // Room for two again: a batch of three gets the first two.
    socket.send({ type: 'unsubscribe', id: 'single0' });
    socket.send({ type: 'unsubscribe', id: 'b0' });
    socket.send(batch([entry('again1'), entry('again2'), entry('again3')]));
    const again = await collect(socket, answers(3));
    expect(answered(again).map((frame) => [frame.type, frame.id])).toEqual([
      ['error', 'again3'],
      ['subscribed', 'again1'],
      ['subscribed', 'again2'],
    ]);
  }, 60_000);

  it('is charged ⌈n/10⌉ frames of the frame budget; a batch the budget cannot cover is refused whole, each id told when to retry', async () => {
    // 30 frames, refilled one per 100 s: the client.auth is one of them.
    await start({ rateLimits: { frames: { perSecond: 0.01, burst: 30 } } });
    const thread = await alice.createThread();
    const socket = await signedIn(alice.token); // 1
    const entries = (prefix: string, count: number) =>
      range(1, count).map((i) => ({ id: `${prefix}${i}`, threadId: thread.threadId, afterSeq: 1 }));
    socket.send(batch(entries('a', 25))); // 3
    socket.send(batch(entries('b', 101))); // 11
    expect(ofType(await collect(socket, answers(126)), 'subscribed')).toHaveLength(126);
    // 15 left: a batch of 151 (16) is refused as a whole, by each of its ids, in order.
    const over = entries('c', 151);
    socket.send(batch(over));
    const refused = await collect(socket, answers(151));
    expect(refused.map((frame) => frame.id)).toEqual(over.map((entry) => entry.id));
    for (const frame of refused) {
      expect(frame).toEqual({
        type: 'error',
        id: frame.id,
        error: {
          code: 'rate_limited',
          message: expect.stringMatching(/^too many frames from alice; retry in \d+ s$/),
          details: { retryAfterSeconds: expect.any(Number) },
        },
      });
      expect((frame.error as { details: { retryAfterSeconds: number } }).details.retryAfterSeconds).toBeGreaterThan(1);
    }
    // It took nothing: a batch of 150 (15) still fits, exactly.
    socket.send(batch(entries('c', 150)));
    const accepted = await collect(socket, answers(150));
    expect(ofType(accepted, 'subscribed')).toHaveLength(150);
    socket.send({ type: 'ping' });
    expect(await socket.next()).toMatchObject({ type: 'error', error: { code: 'rate_limited' } });
  });
});
