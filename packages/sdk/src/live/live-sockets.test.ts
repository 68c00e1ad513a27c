import { LIMITS, type ErrorFrame, type EventEnvelope, type SubscribeBatchEntry } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { event, type FakeSocket, fakeTransport, PRINCIPAL, tick } from '../../test/support/fake-web-socket.js';
import { UNKNOWN_BATCH_ERROR } from '../../test/support/old-server-answers.js';
import { BubbleLive } from './bubble-live.js';
import type { BubbleLiveOptions, LiveState } from './live-options.js';
import { PACED_WINDOW } from './subscribe-pacing.js';
import { SUBSCRIBE_LINGER_MS } from './subscribe-queue.js';

/**
 * How `BubbleLive` subscribes many threads, against hand-written sockets: batched subscribes,
 * subscriptions spread over sockets of at most 1,000, a rate-limited subscribe retried after the
 * server's wait, and a server that does not take batches. (Against the real server:
 * `test/live-many-threads.test.ts`.)
 */
const lives: BubbleLive[] = [];

afterEach(() => {
  for (const live of lives.splice(0)) live.close();
});

function makeLive(options: BubbleLiveOptions = {}) {
  const transport = fakeTransport(false);
  const states: LiveState[] = [];
  const live = new BubbleLive({
    url: 'http://127.0.0.1:1',
    token: 'bubble_user_x',
    webSocketFactory: transport.factory,
    random: () => 0,
    onStateChange: (state) => states.push(state),
    ...options,
  });
  lives.push(live);
  return { live, transport, states };
}

async function signIn(socket: FakeSocket): Promise<void> {
  socket.open();
  await tick();
  socket.push({ type: 'server.ready', principal: PRINCIPAL });
}

/** Every thread subscribe a socket sent, batched or not, as `[threadId, afterSeq]`, in order. */
function subscribed(socket: FakeSocket): Array<[string, number]> {
  return socket.sent.flatMap((frame): Array<[string, number]> => {
    if (frame.type === 'subscribe') return [[frame.threadId, frame.afterSeq]];
    if (frame.type === 'subscribe_batch') return frame.subscriptions.map((entry) => [entry.threadId, entry.afterSeq]);
    return [];
  });
}

const batchOf = (socket: FakeSocket, index = -1): SubscribeBatchEntry[] =>
  socket.ofType('subscribe_batch').at(index)?.subscriptions ?? [];

/** A frame refused by the server's frame rate limit; `id` only where the frame had one. */
function rateLimited(id?: string, retryAfterSeconds = 0.05): ErrorFrame {
  return {
    type: 'error',
    ...(id === undefined ? {} : { id }),
    error: { code: 'rate_limited', message: 'too many frames from alice', details: { retryAfterSeconds } },
  };
}

describe('BubbleLive subscribing many threads', () => {
  it('sends the subscribes asked for in one task as one subscribe_batch, and a lone one as a plain subscribe', async () => {
    const { live, transport } = makeLive();
    const first = ['th_1', 'th_2', 'th_3'].map((threadId) => live.subscribeThread(threadId, { afterSeq: 5 }));
    const socket = transport.sockets[0]!;
    await signIn(socket);
    expect(socket.sent.slice(1)).toEqual([
      {
        type: 'subscribe_batch',
        subscriptions: [
          { id: 's1', threadId: 'th_1', afterSeq: 5 },
          { id: 's2', threadId: 'th_2', afterSeq: 5 },
          { id: 's3', threadId: 'th_3', afterSeq: 5 },
        ],
      },
    ]);
    // Each entry is answered, and fed, by its own id.
    socket.push({ type: 'subscribed', id: 's2', headSeq: 6 });
    socket.push({ type: 'event', id: 's2', event: event(6, 'th_2') });
    expect(((await first[1]!.next()).value as EventEnvelope).seq).toBe(6);

    // While ready: two in one task go together, once the linger after the last send is over.
    await tick(SUBSCRIBE_LINGER_MS + 5);
    live.subscribeThread('th_4');
    live.subscribeThread('th_5');
    const grants = live.subscribeGrantsAsIterable();
    // Any other frame first sends the subscribes that wait: the server sees them in the order asked.
    expect(socket.sent.slice(2)).toEqual([
      {
        type: 'subscribe_batch',
        subscriptions: [
          { id: 's4', threadId: 'th_4', afterSeq: 0 },
          { id: 's5', threadId: 'th_5', afterSeq: 0 },
        ],
      },
      { type: 'subscribe_grants', id: 's6' },
    ]);
    // One soon after waits out the linger (it would join others asked for meanwhile), then goes alone.
    live.subscribeThread('th_6');
    await tick();
    expect(socket.ofType('subscribe')).toEqual([]);
    await tick(SUBSCRIBE_LINGER_MS + 5);
    expect(socket.ofType('subscribe')).toEqual([{ type: 'subscribe', id: 's7', threadId: 'th_6', afterSeq: 0 }]);
    // After a quiet spell a lone one goes at the end of the task.
    await tick(SUBSCRIBE_LINGER_MS + 5);
    live.subscribeThread('th_7');
    await Promise.resolve();
    expect(socket.ofType('subscribe').at(-1)).toEqual({ type: 'subscribe', id: 's8', threadId: 'th_7', afterSeq: 0 });
    grants.unsubscribe();
  });

  it(`puts at most ${LIMITS.maxSubscriptionsPerSocket} subscriptions on a socket, opening another when all are full; a socket whose subscriptions all end closes`, async () => {
    const { live, transport, states } = makeLive();
    const count = 2 * LIMITS.maxSubscriptionsPerSocket + 1;
    const subscriptions = Array.from({ length: count }, (_, i) => live.subscribeThread(`th_${i}`));
    expect(transport.sockets).toHaveLength(3);
    for (const socket of transport.sockets) await signIn(socket);
    const [one, two, three] = transport.sockets as [FakeSocket, FakeSocket, FakeSocket];
    // Each socket's subscribes in one frame: a full batch, a full batch, and a lone subscribe.
    expect(one.sent.map((frame) => frame.type)).toEqual(['client.auth', 'subscribe_batch']);
    expect(batchOf(one)).toHaveLength(LIMITS.maxSubscriptionsPerSocket);
    expect(batchOf(two)).toHaveLength(LIMITS.maxSubscriptionsPerSocket);
    expect(three.sent.slice(1)).toEqual([{ type: 'subscribe', id: 's1', threadId: `th_${count - 1}`, afterSeq: 0 }]);
    expect([...subscribed(one), ...subscribed(two), ...subscribed(three)].map(([threadId]) => threadId)).toEqual(
      subscriptions.map((subscription) => subscription.threadId),
    );
    // The state is the least live socket's: ready once all three are.
    expect(states).toEqual(['connecting', 'connecting', 'connecting', 'ready']);
    expect(live.connectionState).toBe('ready');

    // The grants stream goes where there is room.
    const grants = live.subscribeGrantsAsIterable();
    expect(three.ofType('subscribe_grants')).toHaveLength(1);
    // Every subscription of the second socket ends: it closes; the others stay, and so does the state.
    for (const subscription of subscriptions.slice(
      LIMITS.maxSubscriptionsPerSocket,
      2 * LIMITS.maxSubscriptionsPerSocket,
    ))
      subscription.unsubscribe();
    expect(two.ofType('unsubscribe')).toHaveLength(LIMITS.maxSubscriptionsPerSocket);
    expect([one.isOpen, two.isOpen, three.isOpen]).toEqual([true, false, true]);
    expect(live.connectionState).toBe('ready');
    // A new subscription goes on an open socket with room before a closed one opens again.
    live.subscribeThread('th_new');
    await tick();
    expect(subscribed(three).at(-1)).toEqual(['th_new', 0]);
    expect(transport.sockets).toHaveLength(3);
    grants.unsubscribe();
  });

  it('re-creates the subscriptions of a socket that dropped as one batch, each after the last seq it delivered', async () => {
    const { live, transport } = makeLive();
    const a = live.subscribeThread('th_a');
    const b = live.subscribeThread('th_b', { afterSeq: 10 });
    const first = transport.sockets[0]!;
    await signIn(first);
    const [idA, idB] = batchOf(first).map((entry) => entry.id) as [string, string];
    for (const seq of [1, 2, 3]) first.push({ type: 'event', id: idA, event: event(seq, 'th_a') });
    first.push({ type: 'event', id: idB, event: event(11, 'th_b') });
    await a.next();
    await a.next();
    await b.next();
    first.drop(1006);
    await tick(5);
    const second = transport.sockets[1]!;
    await signIn(second);
    expect(second.ofType('subscribe_batch')).toHaveLength(1);
    // th_a resumes after seq 2, the last its consumer took (3 was only buffered).
    expect(subscribed(second)).toEqual([
      ['th_a', 2],
      ['th_b', 11],
    ]);
  });

  it('subscribes again after the retryAfterSeconds of a rate_limited refusal, all refused together in one batch, and fails none', async () => {
    const { live, transport } = makeLive();
    const subscriptions = ['th_1', 'th_2', 'th_3'].map((threadId) => live.subscribeThread(threadId));
    const socket = transport.sockets[0]!;
    await signIn(socket);
    for (const entry of batchOf(socket)) {
      socket.push({
        type: 'error',
        id: entry.id,
        error: {
          code: 'rate_limited',
          message: 'too many frames from alice; retry in 1 s',
          details: { retryAfterSeconds: 1 },
        },
      });
    }
    await tick(800);
    expect(socket.ofType('subscribe_batch')).toHaveLength(1);
    await tick(400);
    expect(socket.ofType('subscribe_batch')).toHaveLength(2);
    const retried = batchOf(socket);
    expect(retried.map((entry) => entry.threadId)).toEqual(['th_1', 'th_2', 'th_3']);
    socket.push({ type: 'subscribed', id: retried[2]!.id, headSeq: 1 });
    socket.push({ type: 'event', id: retried[2]!.id, event: event(1, 'th_3') });
    expect(await subscriptions[2]!.next()).toMatchObject({ done: false, value: { seq: 1, threadId: 'th_3' } });
  });

  it('falls back to one subscribe each on a socket whose server does not know subscribe_batch, sending the refused ones again', async () => {
    const { live, transport } = makeLive();
    const subscriptions = ['th_1', 'th_2'].map((threadId) => live.subscribeThread(threadId, { afterSeq: 3 }));
    const socket = transport.sockets[0]!;
    await signIn(socket);
    expect(socket.ofType('subscribe_batch')).toHaveLength(1);
    // What a server before subscribe_batch answers: an unknown frame type, with no id.
    socket.push(UNKNOWN_BATCH_ERROR);
    expect(socket.sent.slice(2)).toEqual([
      { type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 3 },
      { type: 'subscribe', id: 's2', threadId: 'th_2', afterSeq: 3 },
    ]);
    live.subscribeThread('th_3');
    live.subscribeThread('th_4');
    await tick(SUBSCRIBE_LINGER_MS + 5);
    expect(socket.sent.slice(4).map((frame) => frame.type)).toEqual(['subscribe', 'subscribe']);
    socket.push({ type: 'subscribed', id: 's1', headSeq: 4 });
    socket.push({ type: 'event', id: 's1', event: event(4, 'th_1') });
    expect(await subscriptions[0]!.next()).toMatchObject({ value: { seq: 4 } });
    // A new socket (the server may have been upgraded meanwhile) is asked with a batch again.
    socket.drop(1006);
    await tick(5);
    const next = transport.sockets[1]!;
    await signIn(next);
    expect(batchOf(next)).toHaveLength(4);
  });

  it('does not fall back when a server that knows subscribe_batch says why it refused one', async () => {
    const { live, transport } = makeLive();
    live.subscribeThread('th_1', { afterSeq: 3 });
    live.subscribeThread('th_2', { afterSeq: 3 });
    const socket = transport.sockets[0]!;
    await signIn(socket);
    socket.push({
      type: 'error',
      error: {
        code: 'invalid_request',
        message: 'invalid subscribe_batch frame: at most 1000 subscriptions per batch',
        details: { type: 'subscribe_batch', limit: 1000, count: 1001 },
      },
    });
    await tick(SUBSCRIBE_LINGER_MS + 5);
    expect(socket.ofType('subscribe')).toHaveLength(0);
    live.subscribeThread('th_3');
    live.subscribeThread('th_4');
    await tick(SUBSCRIBE_LINGER_MS + 5);
    expect(socket.ofType('subscribe_batch').length).toBeGreaterThanOrEqual(2);
    // The refused ones are not stranded: they go again in a batch after a backoff, never one by one.
    const batched = () =>
      socket.ofType('subscribe_batch').flatMap((frame) => frame.subscriptions.map((e) => e.threadId));
    for (let waited = 0; batched().filter((t) => t === 'th_1').length < 2 && waited < 5_000; waited += 20)
      await tick(20);
    expect(
      batched()
        .filter((t) => t === 'th_1' || t === 'th_2')
        .sort(),
    ).toEqual(['th_1', 'th_1', 'th_2', 'th_2']);
    expect(
      batched()
        .filter((t) => t === 'th_3' || t === 'th_4')
        .sort(),
    ).toEqual(['th_3', 'th_4']);
    expect(socket.ofType('subscribe')).toHaveLength(0);
  });

  it('subscribes again a batch refused whole (rate_limited without id), told apart from a refused ping by order', async () => {
    const { live, transport } = makeLive({ heartbeatIntervalMs: 30, heartbeatTimeoutMs: 5_000 });
    live.subscribeThread('th_0');
    const socket = transport.sockets[0]!;
    await signIn(socket);
    socket.push({ type: 'subscribed', id: 's1', headSeq: 1 });
    // A ping goes out, and is not answered yet; then a batch, behind it.
    await tick(60);
    expect(socket.ofType('ping')).toHaveLength(1);
    const batched = ['th_1', 'th_2'].map((threadId) => live.subscribeThread(threadId));
    await tick();
    expect(batchOf(socket).map((entry) => entry.id)).toEqual(['s2', 's3']);
    // The server answers frames as it reads them: the first refusal without id is the ping's.
    socket.push(rateLimited());
    await tick(120);
    expect(socket.ofType('subscribe_batch')).toHaveLength(1);
    // The next is the batch's: its subscriptions go again after the wait, in one batch.
    socket.push(rateLimited());
    await tick(120);
    expect(batchOf(socket)).toEqual([
      { id: 's4', threadId: 'th_1', afterSeq: 0 },
      { id: 's5', threadId: 'th_2', afterSeq: 0 },
    ]);
    socket.push({ type: 'subscribed', id: 's5', headSeq: 1 });
    socket.push({ type: 'event', id: 's5', event: event(1, 'th_2') });
    expect(await batched[1]!.next()).toMatchObject({ value: { seq: 1, threadId: 'th_2' } });
    // The server answered an entry by its id: it takes batches, so an error without id is now a ping's.
    socket.push(rateLimited());
    await tick(120);
    expect(socket.ofType('subscribe_batch')).toHaveLength(2);
    expect(socket.ofType('subscribe')).toEqual([{ type: 'subscribe', id: 's1', threadId: 'th_0', afterSeq: 0 }]);
  });

  it('keeps pinging while a batch awaits its first answer; a pong behind a batch shows it was not refused whole', async () => {
    const { live, transport } = makeLive({ heartbeatIntervalMs: 30, heartbeatTimeoutMs: 200 });
    live.subscribeThread('th_1');
    live.subscribeThread('th_2');
    const socket = transport.sockets[0]!;
    await signIn(socket);
    expect(socket.ofType('subscribe_batch')).toHaveLength(1);
    // The batch's answer is slow (a busy server): the pings go on and are answered, so the socket stays.
    let pongs = 0;
    for (let waited = 0; socket.ofType('ping').length < 3 && waited < 2_000; waited += 10) {
      await tick(10);
      for (; pongs < socket.ofType('ping').length; pongs += 1) socket.push({ type: 'pong' });
    }
    expect(socket.ofType('ping').length).toBeGreaterThanOrEqual(3);
    expect(transport.sockets).toHaveLength(1);
    // The pongs came after the batch, and it was not refused before them: an error without id now is a ping's.
    socket.push(rateLimited());
    await tick(120);
    expect(socket.ofType('subscribe_batch')).toHaveLength(1);
    expect(socket.ofType('subscribe')).toEqual([]);
  });

  it('subscribes again, after a backoff, a batch refused whole for another reason (an internal error without id)', async () => {
    const { live, transport } = makeLive();
    const subscription = live.subscribeThread('th_1');
    live.subscribeThread('th_2');
    const socket = transport.sockets[0]!;
    await signIn(socket);
    expect(batchOf(socket).map((entry) => entry.threadId)).toEqual(['th_1', 'th_2']);
    socket.push({ type: 'error', error: { code: 'internal', message: 'try again', details: {} } });
    for (let waited = 0; socket.ofType('subscribe_batch').length < 2 && waited < 5_000; waited += 20) await tick(20);
    expect(batchOf(socket).map((entry) => entry.threadId)).toEqual(['th_1', 'th_2']);
    const [again] = batchOf(socket);
    socket.push({ type: 'subscribed', id: again!.id, headSeq: 1 });
    socket.push({ type: 'event', id: again!.id, event: event(1, 'th_1') });
    expect(await subscription.next()).toMatchObject({ value: { seq: 1, threadId: 'th_1' } });
  });

  it(`paces one subscribe each: at most ${PACED_WINDOW} unanswered, none during a rate_limited wait, then one at a time`, async () => {
    const { live, transport } = makeLive();
    const count = 40;
    const subscriptions = Array.from({ length: count }, (_, i) => live.subscribeThread(`th_${i}`));
    const socket = transport.sockets[0]!;
    await signIn(socket);
    socket.push(UNKNOWN_BATCH_ERROR);
    const sentIds = () => socket.ofType('subscribe').map((frame) => frame.id);
    expect(sentIds()).toHaveLength(PACED_WINDOW);
    // Each answer lets one more go.
    socket.push({ type: 'subscribed', id: 's1', headSeq: 0 });
    expect(sentIds()).toHaveLength(PACED_WINDOW + 1);
    // A refusal: nothing more until the server's wait is over, whatever else is answered meanwhile.
    socket.push(rateLimited('s2', 0.1));
    for (const id of sentIds().slice(2)) socket.push({ type: 'subscribed', id, headSeq: 0 });
    // One not sent yet that ends is taken back: the server never hears of it.
    subscriptions[count - 1]!.unsubscribe();
    await tick(60);
    expect(sentIds()).toHaveLength(PACED_WINDOW + 1);
    // Then one, and one more for each answered: 1, 2, 4, ...
    await tick(60);
    expect(sentIds()).toHaveLength(PACED_WINDOW + 2);
    const answered = new Set(sentIds());
    const answerNew = () => {
      const fresh = sentIds().filter((id) => !answered.has(id));
      for (const id of fresh) {
        answered.add(id);
        socket.push({ type: 'subscribed', id, headSeq: 0 });
      }
      return fresh.length;
    };
    answered.delete(sentIds().at(-1)!);
    expect(answerNew()).toBe(1);
    expect(answerNew()).toBe(2);
    expect(answerNew()).toBe(4);
    while (answerNew() > 0) await tick();
    // All went, the refused one twice (again after the wait, with a new id), the ended one never.
    const threads = socket.ofType('subscribe').map((frame) => frame.threadId);
    expect(new Set(threads).size).toBe(count - 1);
    expect(threads).not.toContain(`th_${count - 1}`);
    expect(threads.filter((threadId) => threadId === 'th_1')).toHaveLength(2);
    expect(socket.ofType('unsubscribe')).toEqual([]);
  });
});
