import type { EventEnvelope } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { event, fakeTransport, PRINCIPAL, tick } from '../../test/support/fake-web-socket.js';
import { BubbleLive } from './bubble-live.js';

/** `BubbleLive` against a hand-written socket (`FakeSocket`), one socket's worth of subscriptions. */

const lives: BubbleLive[] = [];

afterEach(() => {
  for (const live of lives.splice(0)) live.close();
});

/** A live connection over the fake, signed in and ready. */
async function readyLive(withFlowControl: boolean, bufferLimit = 10) {
  const transport = fakeTransport(withFlowControl);
  const states: string[] = [];
  const live = new BubbleLive({
    url: 'http://127.0.0.1:1',
    token: 'bubble_user_x',
    webSocketFactory: transport.factory,
    bufferLimit,
    heartbeatIntervalMs: 10,
    heartbeatTimeoutMs: 1_000,
    // Reconnects at once: the tests play the server, so no delay has anything to wait for.
    random: () => 0,
    onStateChange: (state) => states.push(state),
  });
  lives.push(live);
  const subscription = live.subscribeThread('th_1');
  const socket = transport.sockets[0]!;
  socket.open();
  await tick();
  socket.push({ type: 'server.ready', principal: PRINCIPAL });
  return { live, subscription, socket, transport, states };
}

async function read(iterator: AsyncIterator<EventEnvelope>, count: number): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i += 1) seqs.push(((await iterator.next()).value as EventEnvelope).seq);
  return seqs;
}

describe('BubbleLive over a WebSocketLike', () => {
  it('signs in, subscribes, pings and unsubscribes with protocol client frames only', async () => {
    const { socket, subscription, live } = await readyLive(false);
    const grants = live.subscribeGrantsAsIterable();
    await tick(30);
    subscription.unsubscribe();
    expect(socket.sent.slice(0, 3)).toEqual([
      { type: 'client.auth', token: 'bubble_user_x' },
      { type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 0 },
      { type: 'subscribe_grants', id: 's2' },
    ]);
    expect(socket.ofType('ping').length).toBeGreaterThan(0);
    expect(socket.sent.at(-1)).toEqual({ type: 'unsubscribe', id: 's1' });
    grants.unsubscribe();
  });

  it('without flow control, parks a subscription that falls behind and subscribes it again after its buffer', async () => {
    const { socket, subscription, transport, states } = await readyLive(false);
    for (let seq = 1; seq <= 30; seq += 1) socket.push({ type: 'event', id: 's1', event: event(seq) });
    // Full at 10: unsubscribed, and the 20 still in flight for s1 are dropped unread.
    expect(socket.ofType('unsubscribe')).toEqual([{ type: 'unsubscribe', id: 's1' }]);
    const pingsBefore = socket.ofType('ping').length;
    await tick(50);
    expect(socket.ofType('ping').length).toBeGreaterThan(pingsBefore);

    // Half read: subscribed again after the last seq it buffered, keeping the rest of its buffer.
    expect(await read(subscription, 4)).toEqual([1, 2, 3, 4]);
    expect(socket.ofType('subscribe')).toHaveLength(1);
    expect(await read(subscription, 1)).toEqual([5]);
    expect(socket.ofType('subscribe').at(-1)).toEqual({ type: 'subscribe', id: 's2', threadId: 'th_1', afterSeq: 10 });
    socket.push({ type: 'event', id: 's2', event: event(11) });
    // A late frame of the old wire id changes nothing.
    socket.push({ type: 'event', id: 's1', event: event(12) });
    expect(await read(subscription, 6)).toEqual([6, 7, 8, 9, 10, 11]);
    expect(transport.sockets).toHaveLength(1);
    expect(states).toEqual(['connecting', 'ready']);
    expect(socket.flowCalls).toEqual([]);
  });

  it('without flow control, a consumer 3,000 events behind gets each once, in order, on one socket', async () => {
    const { socket, subscription, transport, states } = await readyLive(false, 100);
    const head = 3_000;
    // The server's side: each subscribe is answered with its backlog at once, as the real one does.
    const serve = () => {
      for (const frame of socket.ofType('subscribe').slice(served)) {
        socket.push({ type: 'subscribed', id: frame.id, headSeq: head });
        for (let seq = frame.afterSeq + 1; seq <= head; seq += 1)
          socket.push({ type: 'event', id: frame.id, event: event(seq) });
      }
      served = socket.ofType('subscribe').length;
      for (const _ of socket.ofType('ping').slice(pongs)) socket.push({ type: 'pong' });
      pongs = socket.ofType('ping').length;
    };
    let served = 0;
    let pongs = 0;
    const server = setInterval(serve, 1);
    try {
      const seqs: number[] = [];
      while (seqs.length < head) {
        seqs.push(...(await read(subscription, 1)));
        if (seqs.length % 50 === 0) await tick(1);
      }
      expect(seqs).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    } finally {
      clearInterval(server);
    }
    expect(socket.ofType('unsubscribe').length).toBeGreaterThan(10);
    expect(transport.sockets).toHaveLength(1);
    expect(states).toEqual(['connecting', 'ready']);
  });

  it('parks only the subscription that is behind: another on the same socket keeps flowing', async () => {
    const { socket, live } = await readyLive(false, 4);
    const other = live.subscribeThread('th_1', { afterSeq: 100 });
    for (let seq = 1; seq <= 6; seq += 1) socket.push({ type: 'event', id: 's1', event: event(seq) });
    for (let seq = 101; seq <= 110; seq += 1) {
      socket.push({ type: 'event', id: 's2', event: event(seq) });
      expect(await read(other, 1)).toEqual([seq]);
    }
    expect(socket.ofType('unsubscribe')).toEqual([{ type: 'unsubscribe', id: 's1' }]);
  });

  it('keeps a parked subscription off a new socket until its consumer catches up', async () => {
    const { socket, subscription, transport } = await readyLive(false, 4);
    for (let seq = 1; seq <= 4; seq += 1) socket.push({ type: 'event', id: 's1', event: event(seq) });
    socket.drop(1006);
    await tick(5);
    const second = transport.sockets[1]!;
    second.open();
    await tick();
    second.push({ type: 'server.ready', principal: PRINCIPAL });
    expect(second.ofType('subscribe')).toEqual([]);
    expect(await read(subscription, 2)).toEqual([1, 2]);
    expect(second.ofType('subscribe')).toEqual([{ type: 'subscribe', id: 's2', threadId: 'th_1', afterSeq: 4 }]);
    second.push({ type: 'event', id: 's2', event: event(5) });
    expect(await read(subscription, 3)).toEqual([3, 4, 5]);
  });

  it('with flow control, pauses reading (and the heartbeat) and resumes once every buffer is below half', async () => {
    const { socket, subscription } = await readyLive(true);
    for (let seq = 1; seq <= 10; seq += 1) socket.push({ type: 'event', id: 's1', event: event(seq) });
    expect(socket.flowCalls).toEqual(['pause']);
    expect(socket.ofType('unsubscribe')).toEqual([]);
    const pings = socket.ofType('ping').length;
    await tick(50);
    expect(socket.ofType('ping').length).toBe(pings);
    expect(await read(subscription, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(socket.flowCalls).toEqual(['pause', 'resume']);
    await tick(50);
    expect(socket.ofType('ping').length).toBeGreaterThan(pings);
  });

  it('ends every subscription with a typed error when the factory refuses the URL', async () => {
    const live = new BubbleLive({
      url: 'http://127.0.0.1:1',
      token: 'bubble_user_x',
      webSocketFactory: () => {
        throw new SyntaxError('bad url');
      },
    });
    lives.push(live);
    await expect(live.subscribeThread('th_1').next()).rejects.toMatchObject({ code: 'network', retryable: false });
    expect(live.connectionState).toBe('failed');
  });
});
