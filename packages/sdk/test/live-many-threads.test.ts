import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { startTestServer, type TestServer } from '@bubble/server/testing';
import { LIMITS, type EventEnvelope, type Thread } from '@bubble/protocol';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BubbleClient, type LiveState, type ThreadSubscription } from '../src/index.js';
import { take, waitUntil } from './support/live-helpers.js';

/**
 * Issue 19: a client with more threads than one socket may carry (the server's 1,000 per
 * socket), under the server's default rate limits, against the real server over real sockets.
 */
const THREADS = 2_500;
const FAST_RECONNECT = { reconnectBaseMs: 20, reconnectCapMs: 200 };

let server: TestServer;
let aliceToken: string;
let alice: BubbleClient;
let threads: Thread[];
/** Each thread's head seq, as the tests appended to it. */
let heads: number[];
/** The server side of every WebSocket opened on it (its upgrade requests' sockets), in order. */
let upgrades: Duplex[] = [];
const clients: BubbleClient[] = [];

/** Records the WebSocket upgrades of the running server (called again after each restart). */
function watchUpgrades(watched: TestServer): void {
  watched.server.httpServer.on('upgrade', (request: IncomingMessage, socket: Duplex) => {
    if ((request.url ?? '').startsWith('/v1/ws')) upgrades.push(socket);
  });
}

async function createThreads(by: BubbleClient, count: number): Promise<Thread[]> {
  const made: Thread[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        const index = next++;
        made[index] = (await by.createThread({ title: `t${index}` })).thread;
      }
    }),
  );
  return made;
}

function reader(live: ConstructorParameters<typeof BubbleClient>[0]['live'] = {}): BubbleClient {
  const made = new BubbleClient({ url: server.url, token: aliceToken, live: { ...FAST_RECONNECT, ...live } });
  clients.push(made);
  return made;
}

/** The next event of each subscription, all at once. */
async function nextOfEach(subscriptions: readonly ThreadSubscription[]): Promise<EventEnvelope[]> {
  return Promise.all(subscriptions.map(async (subscription) => (await take(subscription, 1))[0] as EventEnvelope));
}

/** Appends one note to each of `indexes`' threads, and the events it made. */
async function noteOn(indexes: readonly number[], text: string): Promise<EventEnvelope[]> {
  const made: EventEnvelope[] = new Array(indexes.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < indexes.length) {
        const at = next++;
        const index = indexes[at] as number;
        const { events } = await alice.appendEvents(threads[index]!.threadId, [{ type: 'test.note', data: { text } }]);
        made[at] = events[0] as EventEnvelope;
        heads[index] = made[at].seq;
      }
    }),
  );
  return made;
}

beforeAll(async () => {
  server = await startTestServer();
  aliceToken = (await server.createHuman('alice')).token.token;
  alice = new BubbleClient({ url: server.url, token: aliceToken });
  threads = await createThreads(alice, THREADS);
  heads = threads.map(() => 1);
  watchUpgrades(server);
}, 120_000);

afterEach(() => {
  for (const made of clients.splice(0)) made.close();
});

afterAll(async () => {
  alice?.close();
  await server?.stop();
});

describe(`${THREADS} thread subscriptions from one client`, () => {
  it('all get their events, over ⌈n/1,000⌉ = 3 sockets, under the default frame rate limit, none failed', async () => {
    upgrades = [];
    const states: LiveState[] = [];
    const client = reader({ onStateChange: (state) => states.push(state) });
    const subscriptions = threads.map((thread) => client.subscribeThread(thread.threadId));
    // Each thread's backlog: its participant_added (seq 1).
    const first = await nextOfEach(subscriptions);
    expect(first.map((event) => [event.threadId, event.seq])).toEqual(threads.map((thread) => [thread.threadId, 1]));
    expect(upgrades).toHaveLength(Math.ceil(THREADS / LIMITS.maxSubscriptionsPerSocket));
    // Live, on each of the three sockets (subscriptions fill them in order).
    const live = [0, 999, 1_000, 1_999, 2_000, THREADS - 1];
    const appended = await noteOn(live, 'live');
    expect(await nextOfEach(live.map((index) => subscriptions[index]!))).toEqual(appended);
    expect(states).not.toContain('failed');
    expect(client.live().connectionState).toBe('ready');
  }, 60_000);

  it('resume from their last seq, with no gap and no duplicate, after a socket is killed and after a server restart', async () => {
    upgrades = [];
    const client = reader();
    const subscriptions = threads.map((thread, index) =>
      client.subscribeThread(thread.threadId, { afterSeq: heads[index] }),
    );
    await waitUntil(
      () => subscriptions.every((subscription) => subscription.headSeqAtSubscribe !== undefined),
      'every subscription is confirmed',
    );
    expect(upgrades).toHaveLength(3);
    // One of each socket's threads, and a few more on the second.
    const probes = [5, 1_000, 1_500, 1_999, 2_400];

    // The server side of the second socket dies: its thousand subscriptions resume on a new one.
    upgrades[1]!.destroy();
    const whileDown = await noteOn(probes, 'while the second socket was down');
    expect(await nextOfEach(probes.map((index) => subscriptions[index]!))).toEqual(whileDown);
    expect(upgrades).toHaveLength(4);

    // The whole server restarts: every socket resumes.
    await server.restart();
    watchUpgrades(server);
    const afterRestart = await noteOn(probes, 'after the restart');
    expect(await nextOfEach(probes.map((index) => subscriptions[index]!))).toEqual(afterRestart);
    // Nothing was lost or sent twice: the next event of each thread (every 7th, and the probes) is the one appended now.
    const sample = threads.map((_, index) => index).filter((index) => index % 7 === 0 || probes.includes(index));
    const marks = await noteOn(sample, 'mark');
    expect(await nextOfEach(sample.map((index) => subscriptions[index]!))).toEqual(marks);
  }, 120_000);
});

describe('a frame budget too small for the batches', () => {
  let limited: TestServer;

  afterEach(async () => {
    await limited?.stop();
  });

  it('subscribes refused as rate_limited go again after the wait the server gives, and none fails', async () => {
    // 10 frames at once, 2 a second: the client.auth takes one, so a batch of 100 (10 frames) waits a second.
    limited = await startTestServer({ rateLimits: { frames: { perSecond: 2, burst: 10 } } });
    const token = (await limited.createHuman('carol')).token.token;
    const carol = new BubbleClient({ url: limited.url, token });
    clients.push(carol);
    const few = await createThreads(carol, 100);
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const states: LiveState[] = [];
    const client = new BubbleClient({
      url: limited.url,
      token,
      logger,
      live: { ...FAST_RECONNECT, onStateChange: (state) => states.push(state) },
    });
    clients.push(client);
    const subscriptions = few.map((thread) => client.subscribeThread(thread.threadId));
    const first = await nextOfEach(subscriptions);
    expect(first.map((event) => event.seq)).toEqual(few.map(() => 1));
    expect(lines.some((line) => line.includes('rate limited'))).toBe(true);
    expect(states).not.toContain('failed');
  }, 60_000);
});
