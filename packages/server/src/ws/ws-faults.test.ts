/**
 * Failures of the core as the WebSocket layer sees them: the real store and
 * bus, with one dependency made to throw. The socket gets a clear answer and
 * the server keeps serving.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { authenticateToken } from '../services/auth-service.js';
import { createHumanPrincipal } from '../services/principal-service.js';
import { createLiveBus } from '../live/live-bus.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { BubbleStore } from '../store/store.js';
import { attachWebSocket, type WebSocketLayer } from './attach-websocket.js';
import type { WsDeps } from './ws-deps.js';
import { TestSocket } from './ws-test-client.js';

type Faulty = 'authenticate' | 'readAccess' | 'readEvents' | 'listLiveGrants';

let dir: string;
let store: BubbleStore;
let http: Server;
let layer: WebSocketLayer;

async function setUp(faulty: Faulty): Promise<{ wsUrl: string; token: string }> {
  dir = await mkdtemp(join(tmpdir(), 'bubble-ws-faults-'));
  const bus = createLiveBus();
  store = await openSqliteStore(join(dir, 'bubble.db'), {
    onCommit: (messages) => {
      for (const m of messages) bus.publish(m);
    },
  });
  const boom = (): Promise<never> => Promise.reject(new Error('disk on fire'));
  const deps: WsDeps = {
    authenticate: (t) => authenticateToken(store, t),
    readAccess: async () => 'read',
    readEvents: (threadId, afterSeq, limit) => store.readEventsAfter(threadId, afterSeq, limit),
    listLiveGrants: (principalId) => store.listLiveGrantsOfPrincipal(principalId),
    bus,
    logger: pino({ level: 'silent' }),
  };
  deps[faulty] = boom;
  http = createServer((_req, res) => res.writeHead(404).end());
  layer = attachWebSocket(http, deps);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  const token = (await createHumanPrincipal(store, 'alice', null)).token.token;
  await store.createThread({ threadId: 'th_f', parentThreadId: null, title: null, createdBy: 'alice', key: null });
  return { wsUrl: `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/ws`, token };
}

afterEach(async () => {
  await layer.close(1001, 'test over');
  await new Promise((resolve) => http.close(resolve));
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('when the core fails', () => {
  it('closes with 1011 when authentication itself fails (not a bad token), and keeps accepting sockets', async () => {
    const { wsUrl, token } = await setUp('authenticate');
    const socket = await TestSocket.open(wsUrl);
    socket.send({ type: 'client.auth', token });
    expect((await socket.closed).code).toBe(1011);
    const again = await TestSocket.open(wsUrl);
    again.send({ type: 'client.auth', token });
    expect((await again.closed).code).toBe(1011);
  });

  it.each<[Faulty, object]>([
    ['readAccess', { type: 'subscribe', id: 'x', threadId: 'th_f', afterSeq: 0 }],
    ['readEvents', { type: 'subscribe', id: 'x', threadId: 'th_f', afterSeq: 0 }],
    ['listLiveGrants', { type: 'subscribe_grants', id: 'x' }],
  ])('answers an internal error frame when %s fails, frees the id, and keeps the socket', async (faulty, frame) => {
    const { wsUrl, token } = await setUp(faulty);
    const { socket } = await TestSocket.authenticated(wsUrl, token);
    socket.send(frame);
    const error = await socket.next();
    expect(error).toMatchObject({ type: 'error', id: 'x', error: { code: 'internal' } });
    expect(JSON.stringify(error)).not.toContain('disk on fire');
    socket.send({ type: 'unsubscribe', id: 'x' });
    expect(await socket.roundTrip()).toEqual([]);
    socket.send(frame);
    expect(await socket.next()).toMatchObject({ type: 'error', id: 'x', error: { code: 'internal' } });
    socket.close();
  });
});
