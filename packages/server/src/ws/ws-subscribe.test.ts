import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { TestApi } from './ws-test-api.js';
import { MAX_SUBSCRIPTIONS_PER_SOCKET } from './connection.js';
import { TestSocket, type Frame } from './ws-test-client.js';

let server: TestServer;
let alice: TestApi;
let bob: TestApi;

async function start(options: Parameters<typeof startTestServer>[0] = {}): Promise<void> {
  server = await startTestServer(options);
  alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
  bob = new TestApi(server.url, (await server.createHuman('bob')).token.token);
}

afterEach(async () => {
  await server.stop();
});

const notes = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => ({ type: 'test.note', data: { text: `${prefix}${i}` } }));

/** Takes event frames of subscription `id` until one has `seq === lastSeq`; fails on any other frame type. */
async function eventsUntil(socket: TestSocket, id: string, lastSeq: number): Promise<EventEnvelope[]> {
  const frames = await socket.until(
    (frame) => frame.type === 'event' && (frame.event as EventEnvelope).seq === lastSeq,
    20_000,
  );
  for (const frame of frames) expect(frame).toMatchObject({ type: 'event', id });
  return frames.map((frame) => frame.event as EventEnvelope);
}

const seqs = (events: EventEnvelope[]): number[] => events.map((event) => event.seq);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('subscribe', () => {
  beforeEach(() => start());

  it('sends subscribed with the head seq, the backlog after afterSeq, then live events', async () => {
    const thread = await alice.createThread({ title: 't' });
    await alice.append(thread.threadId, notes(5, 'a')); // seqs 2..6 (1 is participant_added)
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.send({ type: 'subscribe', id: 's1', threadId: thread.threadId, afterSeq: 2 });
    expect(await socket.next()).toEqual({ type: 'subscribed', id: 's1', headSeq: 6 });
    const backlog = await eventsUntil(socket, 's1', 6);
    expect(seqs(backlog)).toEqual([3, 4, 5, 6]);
    expect(backlog[0]).toMatchObject({
      threadId: thread.threadId,
      type: 'test.note',
      principalId: 'alice',
      data: { text: 'a1' },
    });
    const appended = await alice.append(thread.threadId, notes(3, 'b'));
    const live = await eventsUntil(socket, 's1', 9);
    expect(live).toEqual(appended);
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('pages through a backlog longer than one store page, in order', async () => {
    const thread = await alice.createThread();
    for (let i = 0; i < 5; i += 1) await alice.append(thread.threadId, notes(500, `p${i}-`));
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.send({ type: 'subscribe', id: 'all', threadId: thread.threadId, afterSeq: 0 });
    expect(await socket.next()).toEqual({ type: 'subscribed', id: 'all', headSeq: 2501 });
    expect(seqs(await eventsUntil(socket, 'all', 2501))).toEqual(range(1, 2501));
    socket.close();
  });

  it('delivers every event exactly once, in order, to subscribers that join while several clients append', async () => {
    const thread = await alice.createThread();
    const writers = 4;
    const requestsPerWriter = 30;
    const perRequest = 3;
    const total = 1 + writers * requestsPerWriter * perRequest;
    let done = 0;
    const appending = Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let r = 0; r < requestsPerWriter; r += 1) {
          await alice.append(thread.threadId, notes(perRequest, `w${w}r${r}-`));
          done += 1;
        }
      }),
    );
    const joins: Array<Promise<EventEnvelope[]>> = [];
    for (const joinAt of [0, 10, 30, 60, 90]) {
      while (done < joinAt) await new Promise((resolve) => setTimeout(resolve, 1));
      const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
      socket.send({ type: 'subscribe', id: `j${joinAt}`, threadId: thread.threadId, afterSeq: 0 });
      joins.push(
        socket.next().then(async (subscribed) => {
          expect(subscribed).toMatchObject({ type: 'subscribed', id: `j${joinAt}` });
          const events = await eventsUntil(socket, `j${joinAt}`, total);
          expect(await socket.roundTrip()).toEqual([]);
          socket.close();
          return events;
        }),
      );
    }
    await appending;
    const received = await Promise.all(joins);
    for (const events of received) expect(seqs(events)).toEqual(range(1, total));
  });

  it('answers a subscription without read access with an error frame, and keeps the socket', async () => {
    const thread = await alice.createThread();
    const { socket } = await TestSocket.authenticated(server.wsUrl, bob.token);
    socket.send({ type: 'subscribe', id: 'x', threadId: thread.threadId, afterSeq: 0 });
    expect(await socket.next()).toMatchObject({ type: 'error', id: 'x', error: { code: 'forbidden' } });
    socket.send({ type: 'subscribe', id: 'y', threadId: 'th_doesnotexist', afterSeq: 0 });
    expect(await socket.next()).toMatchObject({
      type: 'error',
      id: 'y',
      error: { code: 'not_found', message: 'thread th_doesnotexist not found' },
    });
    // The refused id is free again, and nothing of that thread arrives.
    await alice.note(thread.threadId, 'secret');
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('refuses a duplicate subscription id on the same socket and keeps the first subscription', async () => {
    const thread = await alice.createThread();
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 1 });
    expect(await socket.next()).toEqual({ type: 'subscribed', id: 's', headSeq: 1 });
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 0 });
    expect(await socket.next()).toMatchObject({ type: 'error', id: 's', error: { code: 'conflict' } });
    socket.send({ type: 'subscribe_grants', id: 's' });
    expect(await socket.next()).toMatchObject({ type: 'error', id: 's', error: { code: 'conflict' } });
    const event = await alice.note(thread.threadId, 'hello');
    expect(await socket.next()).toEqual({ type: 'event', id: 's', event });
    socket.close();
  });

  it(`refuses more than ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions on one socket, and accepts one again after an unsubscribe`, async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SOCKET; i += 1) socket.send({ type: 'subscribe_grants', id: `g${i}` });
    socket.send({ type: 'subscribe_grants', id: 'one-too-many' });
    let synced = 0;
    const frames = await socket.until(
      (frame) => frame.type === 'grants_synced' && ++synced === MAX_SUBSCRIPTIONS_PER_SOCKET,
      30_000,
    );
    frames.push(...(await socket.roundTrip()));
    expect(frames.filter((frame) => frame.type === 'grants_synced')).toHaveLength(MAX_SUBSCRIPTIONS_PER_SOCKET);
    expect(frames.filter((frame) => frame.type === 'error')).toEqual([
      expect.objectContaining({ id: 'one-too-many', error: expect.objectContaining({ code: 'invalid_request' }) }),
    ]);
    socket.send({ type: 'unsubscribe', id: 'g0' });
    socket.send({ type: 'subscribe_grants', id: 'one-too-many' });
    expect(await socket.next()).toEqual({ type: 'grants_synced', id: 'one-too-many' });
    socket.close();
  });

  it('stops delivery on unsubscribe, while another subscription on the same socket keeps receiving', async () => {
    const thread = await alice.createThread();
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.send({ type: 'subscribe', id: 'gone', threadId: thread.threadId, afterSeq: 1 });
    socket.send({ type: 'subscribe', id: 'kept', threadId: thread.threadId, afterSeq: 1 });
    expect(await socket.until((frame) => frame.type === 'subscribed' && frame.id === 'kept')).toHaveLength(2);
    socket.send({ type: 'unsubscribe', id: 'gone' });
    expect(await socket.roundTrip()).toEqual([]);
    const event = await alice.note(thread.threadId, 'after');
    const frames = await socket.roundTrip();
    expect(frames).toEqual([{ type: 'event', id: 'kept', event }]);
    // The id may be used again once unsubscribed.
    socket.send({ type: 'subscribe', id: 'gone', threadId: thread.threadId, afterSeq: 1 });
    expect(await socket.next()).toEqual({ type: 'subscribed', id: 'gone', headSeq: 2 });
    expect(await socket.next()).toEqual({ type: 'event', id: 'gone', event });
    socket.close();
  });
});

describe('slow consumers', () => {
  beforeEach(() => start({ ws: { maxBufferedBytes: 64 * 1024 } }));

  it('closes a socket that stops reading with 4008; what it got before is in order without gaps', async () => {
    const thread = await alice.createThread();
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 1 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 's' });
    socket.ws.pause();
    // 16 MB: well past what loopback TCP absorbs for a reader that stops
    // (a paused reader's receive buffer stays near tcp_rmem's default; the
    // sender's grows to tcp_wmem's max, 4 MiB by default).
    const pad = 'x'.repeat(1000);
    for (let i = 0; i < 80; i += 1) {
      await alice.append(
        thread.threadId,
        Array.from({ length: 200 }, () => ({ type: 'test.note', data: { pad } })),
      );
    }
    // Another socket is unaffected.
    const other = await TestSocket.authenticated(server.wsUrl, alice.token);
    expect(await other.socket.roundTrip()).toEqual([]);
    socket.ws.resume();
    expect((await socket.closed).code).toBe(4008);
    const received: Frame[] = [...socket.pending()];
    expect(received.length).toBeGreaterThan(0);
    expect(received.length).toBeLessThan(16_000);
    expect(seqs(received.map((frame) => frame.event as EventEnvelope))).toEqual(range(2, 1 + received.length));
    other.socket.close();
  });
});
