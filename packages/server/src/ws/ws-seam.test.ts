/**
 * The backlog/live seam under a wide race window: the real SQLite store and
 * live bus, with the WebSocket layer's reads slowed down (before or after the
 * store answers) while writes land. Every event and grant change must arrive
 * exactly once, in order.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope, Grant } from '@bubble/protocol';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAccessOf } from '../domain/access-rules.js';
import { authenticateToken } from '../services/auth-service.js';
import { createHumanPrincipal } from '../services/principal-service.js';
import { createLiveBus } from '../live/live-bus.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { BubbleStore } from '../store/store.js';
import { attachWebSocket, type WebSocketLayer } from './attach-websocket.js';
import { TestSocket } from './ws-test-client.js';

type Slow = 'before' | 'after';

let dir: string;
let store: BubbleStore;
let http: Server;
let layer: WebSocketLayer;
let wsUrl: string;
let token: string;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function setUp(slow: Slow, maxBufferedBytes?: number): Promise<void> {
  dir = await mkdtemp(join(tmpdir(), 'bubble-ws-seam-'));
  const bus = createLiveBus();
  store = await openSqliteStore(join(dir, 'bubble.db'), {
    onCommit: (messages) => {
      for (const m of messages) bus.publish(m);
    },
  });
  const delayed = async <T>(read: () => Promise<T>): Promise<T> => {
    if (slow === 'before') {
      await sleep(40);
      return read();
    }
    const result = await read();
    await sleep(40);
    return result;
  };
  http = createServer((_req, res) => res.writeHead(404).end());
  layer = attachWebSocket(
    http,
    {
      authenticate: (t) => authenticateToken(store, t),
      readAccess: async (principalId, threadId) => readAccessOf(await store.getThreadAccess(threadId, principalId)),
      readEvents: (threadId, afterSeq, limit) => delayed(() => store.readEventsAfter(threadId, afterSeq, limit)),
      listLiveGrants: (principalId) => delayed(() => store.listLiveGrantsOfPrincipal(principalId)),
      bus,
      logger: pino({ level: 'silent' }),
    },
    maxBufferedBytes === undefined ? {} : { maxBufferedBytes },
  );
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  wsUrl = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/ws`;
  token = (await createHumanPrincipal(store, 'alice', null)).token.token;
  await createHumanPrincipal(store, 'bob', null);
}

afterEach(async () => {
  await layer.close(1001, 'test over');
  await new Promise((resolve) => http.close(resolve));
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe.each<Slow>(['before', 'after'])('with reads slowed %s the store answers', (slow) => {
  beforeEach(() => setUp(slow));

  it('delivers every event once, in order, across the backlog/live seam', async () => {
    const { thread } = await store.createThread({
      threadId: 'th_seam',
      parentThreadId: null,
      title: null,
      createdBy: 'alice',
      key: null,
    });
    let writing = true;
    let appended = 0;
    const writer = (async () => {
      while (writing) {
        await store.appendEvents({
          threadId: thread.threadId,
          principalId: 'alice',
          events: [{ type: 'test.note', data: { n: appended } }],
        });
        appended += 1;
        await sleep(1);
      }
    })();
    const { socket } = await TestSocket.authenticated(wsUrl, token);
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 0 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 's' });
    await sleep(150);
    writing = false;
    await writer;
    const last = 1 + appended;
    const frames = await socket.until((frame) => frame.type === 'event' && (frame.event as EventEnvelope).seq === last);
    expect(frames.map((frame) => (frame.event as EventEnvelope).seq)).toEqual(
      Array.from({ length: last }, (_, i) => i + 1),
    );
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('sends each grant change once across the snapshot/live seam', async () => {
    const threads = ['th_g1', 'th_g2', 'th_g3', 'th_g4'];
    for (const threadId of threads)
      await store.createThread({ threadId, parentThreadId: null, title: null, createdBy: 'bob', key: null });
    await store.putGrant({ threadId: 'th_g1', principalId: 'alice', role: 'member', by: 'bob', mayChangeRole: true });
    const { socket } = await TestSocket.authenticated(wsUrl, token);
    socket.send({ type: 'subscribe_grants', id: 'g' });
    // Land changes while the snapshot read is held up.
    await sleep(10);
    await store.putGrant({ threadId: 'th_g2', principalId: 'alice', role: 'member', by: 'bob', mayChangeRole: true });
    await store.putGrant({ threadId: 'th_g3', principalId: 'alice', role: 'member', by: 'bob', mayChangeRole: true });
    await store.revokeGrant({ threadId: 'th_g3', principalId: 'alice', by: 'bob' });
    await store.putGrant({ threadId: 'th_g1', principalId: 'alice', role: 'owner', by: 'bob', mayChangeRole: true });
    await sleep(80);
    await store.putGrant({ threadId: 'th_g4', principalId: 'alice', role: 'member', by: 'bob', mayChangeRole: true });
    const frames = await socket.until((frame) => frame.type === 'grant' && (frame.grant as Grant).threadId === 'th_g4');
    const synced = frames.findIndex((frame) => frame.type === 'grants_synced');
    expect(synced).toBeGreaterThanOrEqual(0);
    // The client's view after replaying every frame is the store's, and no change came twice.
    const view = new Map<string, string>();
    const seen = new Set<string>();
    for (const frame of frames) {
      if (frame.type !== 'grant') continue;
      const grant = frame.grant as Grant;
      const key = `${String(frame.change)} ${grant.threadId} ${grant.role} ${grant.grantedAt}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      if (frame.change === 'added') view.set(grant.threadId, grant.role);
      else view.delete(grant.threadId);
    }
    const live = await store.listLiveGrantsOfPrincipal('alice');
    expect(Object.fromEntries(view)).toEqual(Object.fromEntries(live.map((grant) => [grant.threadId, grant.role])));
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });
});

describe('with more live events during a slow read than a socket may hold', () => {
  beforeEach(() => setUp('after', 64 * 1024));

  it('drops the held events and reads them from the store, still exactly once and in order', async () => {
    const { thread } = await store.createThread({
      threadId: 'th_flood',
      parentThreadId: null,
      title: null,
      createdBy: 'alice',
      key: null,
    });
    const pad = 'x'.repeat(1000);
    let writing = true;
    let appended = 0;
    const writer = (async () => {
      while (writing) {
        await store.appendEvents({
          threadId: thread.threadId,
          principalId: 'alice',
          events: Array.from({ length: 20 }, () => ({ type: 'test.note', data: { pad } })),
        });
        appended += 20;
        await sleep(2);
      }
    })();
    const { socket } = await TestSocket.authenticated(wsUrl, token);
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 0 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 's' });
    await sleep(200);
    writing = false;
    await writer;
    // Well over 64 KiB of events landed while each 40 ms read was held up.
    expect(appended * 1000).toBeGreaterThan(4 * 64 * 1024);
    const last = 1 + appended;
    const frames = await socket.until(
      (frame) => frame.type === 'event' && (frame.event as EventEnvelope).seq === last,
      20_000,
    );
    expect(frames.map((frame) => (frame.event as EventEnvelope).seq)).toEqual(
      Array.from({ length: last }, (_, i) => i + 1),
    );
    socket.close();
  });
});
