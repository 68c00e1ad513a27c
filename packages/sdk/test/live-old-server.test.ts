import { startTestServer, type TestServer } from '@bubble/server/testing';
import type { EventEnvelope, Thread } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { BubbleClient, type LiveState, type ThreadSubscription } from '../src/index.js';
import { take } from './support/live-helpers.js';
import { OldServerProxy } from './support/old-server-proxy.js';

/**
 * The live connection against a server from before `subscribe_batch` (`OldServerProxy`: the
 * real server, behind a relay that answers `subscribe_batch` as such a server did), under frame
 * rate limits small enough to refuse what the client sends: every subscription ends served, and
 * the socket is not closed for sending too fast.
 */
const FAST_RECONNECT = { reconnectBaseMs: 20, reconnectCapMs: 200 };

let server: TestServer | undefined;
let proxy: OldServerProxy | undefined;
const clients: BubbleClient[] = [];

afterEach(async () => {
  for (const made of clients.splice(0)) made.close();
  await proxy?.stop();
  await server?.stop();
  proxy = undefined;
  server = undefined;
});

/** The real server with these frame limits, the old-server relay in front of it, and a person's token. */
async function oldServer(frames: { perSecond: number; burst: number }) {
  server = await startTestServer({ rateLimits: { frames } });
  proxy = await OldServerProxy.start(server.wsUrl);
  const token = (await server.createHuman('alice')).token.token;
  const http = new BubbleClient({ url: server.url, token });
  clients.push(http);
  const states: LiveState[] = [];
  const live = new BubbleClient({
    url: server.url,
    token,
    live: { ...FAST_RECONNECT, wsUrl: proxy.wsUrl, onStateChange: (state) => states.push(state) },
  });
  clients.push(live);
  return { http, live, states, proxy };
}

async function createThreads(by: BubbleClient, count: number): Promise<Thread[]> {
  const made: Thread[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const index = next++;
        made[index] = (await by.createThread({ title: `t${index}` })).thread;
      }
    }),
  );
  return made;
}

/** The first event of each subscription; rejects, saying how many had theirs, after `timeoutMs`. */
async function firstOfEach(subscriptions: readonly ThreadSubscription[], timeoutMs: number): Promise<EventEnvelope[]> {
  let served = 0;
  const all = Promise.all(
    subscriptions.map(async (subscription) => {
      const [first] = await take(subscription, 1);
      served += 1;
      return first as EventEnvelope;
    }),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`after ${timeoutMs} ms, ${served} of ${subscriptions.length} subscriptions were served`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([all, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a server from before subscribe_batch, under its frame rate limit', () => {
  it('a subscribe_batch refused whole (rate_limited without id) is sent again after the wait, and each of its subscriptions is served', async () => {
    const burst = 10;
    const { http, live, states, proxy } = await oldServer({ perSecond: 2, burst });
    const threads = await createThreads(http, 4);
    // A lone subscribe first: the socket is signed in and serving.
    const lone = live.subscribeThread(threads[0]!.threadId);
    expect((await firstOfEach([lone], 10_000)).map((event) => event.seq)).toEqual([1]);

    // The next batch finds the principal's frame budget empty: the server refuses the frame whole.
    proxy.drainBeforeNextBatch = burst;
    const batched = threads.slice(1).map((thread) => live.subscribeThread(thread.threadId));
    const first = await firstOfEach(batched, 15_000);
    expect(first.map((event) => [event.threadId, event.seq])).toEqual(
      threads.slice(1).map((thread) => [thread.threadId, 1]),
    );
    expect(proxy.batchesRefused).toBe(1);
    // Sent again, it was answered as an unknown frame type: the client then subscribed one by one.
    expect(proxy.batches).toBe(2);
    expect(proxy.subscribes).toBeGreaterThanOrEqual(1 + batched.length);
    expect(proxy.closeCodes).toEqual([]);
    expect(states).not.toContain('failed');
  }, 40_000);

  it('one subscribe each, paced to what the frame limit lets through: 300 subscriptions served on the first socket, never closed with 4008', async () => {
    // 100 frames at once and 50 a second: 300 subscribes sent at once would have 50 refused in a
    // row, and the socket closed (4008), long before the budget could take them.
    const { http, live, states, proxy } = await oldServer({ perSecond: 50, burst: 100 });
    const threads = await createThreads(http, 300);
    const subscriptions = threads.map((thread) => live.subscribeThread(thread.threadId));
    const first = await firstOfEach(subscriptions, 30_000);
    expect(first.map((event) => [event.threadId, event.seq])).toEqual(threads.map((thread) => [thread.threadId, 1]));
    expect(proxy.batches).toBe(1);
    expect(proxy.closeCodes).toEqual([]);
    expect(proxy.connections).toBe(1);
    expect(states).not.toContain('failed');

    // And the subscriptions are live.
    const { events } = await http.appendEvents(threads[299]!.threadId, [{ type: 'test.note', data: { text: 'live' } }]);
    expect(await firstOfEach([subscriptions[299]!], 10_000)).toEqual(events);
  }, 60_000);
});
