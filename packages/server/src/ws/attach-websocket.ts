import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { LIMITS } from '@bubble/protocol';
import WebSocket, { WebSocketServer } from 'ws';
import { PresenceRegistry } from '../presence/presence-registry.js';
import { Connection, type ConnectionContext } from './connection.js';
import { DEFAULT_PRESENCE_GRACE_MS, PresenceFanout } from './presence-fanout.js';
import { WsHub } from './ws-hub.js';
import type { WsDeps, WsOptions } from './ws-deps.js';

export const WS_PATH = '/v1/ws';
const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** The longest a flush holds back the next one (`ws-hub.ts`), ms; exported for the bench's relay baseline. */
export const DEFAULT_FLUSH_INTERVAL_MS = 20;
/** A socket's queue is written out early once it holds this much (or a quarter of the limit). */
const FLUSH_THRESHOLD_BYTES = 256 * 1024;
/** How long `close()` waits for clients to answer the close handshake before cutting them off. */
const CLOSE_GRACE_MS = 2_000;

export interface WebSocketLayer {
  /** Closes every socket with this code (1001 on shutdown) and stops accepting new ones. */
  close(code: number, reason: string): Promise<void>;
  /** Open sockets, authenticated or not. */
  connectionCount(): number;
}

/**
 * Serves `GET /v1/ws` on an existing HTTP server: the WebSocket half of the
 * wire contract (protocol.md, "WebSocket").
 */
export function attachWebSocket(server: Server, deps: WsDeps, options: WsOptions = {}): WebSocketLayer {
  const registry = deps.presence ?? new PresenceRegistry();
  const hub = new WsHub(
    options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS,
    (error) => deps.logger.error({ err: error }, 'websocket write failed'),
    registry,
  );
  const presence = new PresenceFanout({
    registry,
    listLiveGrants: (principalId) => deps.listLiveGrants(principalId),
    deliver: (threadId, principalId, online, at, joinedAfter) =>
      hub.presenceOnThread(threadId, principalId, online, at, joinedAfter),
    mark: () => hub.markPresence(),
    serving: () => hub.servesThreads(),
    graceMs: options.presenceGraceMs ?? DEFAULT_PRESENCE_GRACE_MS,
    logger: deps.logger,
  });
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const context: ConnectionContext = {
    deps,
    hub,
    authTimeoutMs: options.authTimeoutMs ?? LIMITS.authTimeoutSeconds * 1000,
    maxBufferedBytes,
    flushThresholdBytes: Math.max(1, Math.min(FLUSH_THRESHOLD_BYTES, Math.floor(maxBufferedBytes / 4))),
  };
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: LIMITS.maxFrameBytes,
    // Compression costs ~300 KiB of zlib state per socket and CPU per frame.
    perMessageDeflate: false,
    clientTracking: false,
  });
  const connections = new Set<Connection>();
  let closing = false;

  const unsubscribe = deps.bus.subscribe((message) => {
    try {
      hub.dispatch(message);
      if (message.kind === 'grant' && message.change === 'added') presence.grantAdded(message.grant);
    } catch (error) {
      deps.logger.error({ err: error, kind: message.kind }, 'websocket fan-out failed');
    }
  });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== WS_PATH) {
      // Another upgrade handler may own this path; answer only if there is none.
      if (server.listenerCount('upgrade') === 1) refuse(socket, 404, 'Not Found');
      return;
    }
    if (closing) {
      refuse(socket, 503, 'Service Unavailable');
      return;
    }
    if (deps.admitUpgrade !== undefined && !deps.admitUpgrade(request, socket)) return;
    const clientAddress = deps.clientAddress?.(request) ?? request.socket.remoteAddress;
    wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      if (closing) {
        ws.close(1001, 'server shutting down');
        return;
      }
      const connection = new Connection(ws, request.socket as Socket, context, clientAddress);
      connections.add(connection);
      ws.once('close', () => connections.delete(connection));
    });
  };
  server.on('upgrade', onUpgrade);

  return {
    connectionCount: () => connections.size,
    async close(code, reason) {
      if (!closing) {
        closing = true;
        server.off('upgrade', onUpgrade);
        unsubscribe();
      }
      const open = [...connections];
      // The sockets' closing still counts (the registry hears each principal go), but nothing is left here to tell.
      presence.close();
      await Promise.all(open.map((connection) => closeAndWait(connection, code, reason)));
    },
  };
}

function closeAndWait(connection: Connection, code: number, reason: string): Promise<void> {
  const { ws } = connection;
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
    ws.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    // A socket already closing (slow consumer, revoked) keeps its own code; the timer still ends it.
    connection.close(code, reason);
  });
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.on('error', () => {});
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
