import { makePrivateDir } from './store/sqlite/private-files.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { LIMITS } from '@bubble/protocol';
import { rateLimited, toErrorResponse } from './errors/bubble-error.js';
import type { AddressInfo, Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import type { LiveBus, LiveBusMessage } from './live/live-bus.js';
import { createClusterBus, isClusterStore, type ClusterOptions } from './cluster/cluster-bus.js';
import { ClusterPresence, type ClusterPresenceOptions } from './cluster/cluster-presence.js';
import { PresenceRegistry } from './presence/presence-registry.js';
import { guardConnections, refuseOnSocket, type ConnectionLimits } from './http/connection-guard.js';
import { clientAddress, trustedProxiesOf } from './domain/client-address.js';
import { createRequestHandler } from './http/create-request-handler.js';
import { createRoutes } from './http/routes.js';
import { createRateLimiters, type RateLimitOptions, type RateLimits } from './http/rate-limiter.js';
import { budgetKeyOf } from './domain/rate-limit-keys.js';
import { createAuthAttempts } from './services/auth-attempts.js';
import { createStaticWebRoot } from './http/static-web-root.js';
import { createArtifactService } from './services/artifact-service.js';
import { createAuthenticator } from './services/authenticator.js';
import { createEventService } from './services/event-service.js';
import { createInviteService } from './services/invite-service.js';
import { watchTokenRevocations } from './services/revocation-watch.js';
import { createOidcAuthenticator } from './oidc/oidc-authenticator.js';
import type { OidcOptions } from './oidc/oidc-options.js';
import { createPrincipalService } from './services/principal-service.js';
import { createThreadService } from './services/thread-service.js';
import { readAccessOf } from './domain/access-rules.js';
import { openSqliteStore } from './store/sqlite/sqlite-store.js';
import { openPostgresStore } from './store/postgres/postgres-store.js';
import type { PostgresPoolOptions } from './store/postgres/postgres-pool.js';
import type { BubbleStore } from './store/store.js';
import { attachWebSocket, type WebSocketLayer } from './ws/attach-websocket.js';
import type { WsOptions } from './ws/ws-deps.js';

export const SERVER_VERSION = '0.1.0';
export const DATABASE_FILE_NAME = 'bubble.db';

export interface BubbleServerOptions {
  /** Folder of the SQLite database (`bubble.db` inside); created if missing. Needed unless `database` is given. */
  dataDir?: string;
  /** A PostgreSQL connection string (`postgres://…`): the store is there, and other instances may share it. */
  database?: string;
  /** The PostgreSQL pool (with `database`): its size and statement timeout. */
  postgres?: Omit<PostgresPoolOptions, 'onError'>;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 7777; 0 picks a free port. */
  port?: number;
  /** Default: a silent logger. */
  logger?: Logger;
  ws?: WsOptions;
  /**
   * Rate limits, on by default (`DEFAULT_RATE_LIMITS` in `http/rate-limiter.ts`):
   * HTTP requests and WebSocket frames per principal (a bot's against the human
   * who created it) and failed authentications per client address. Each can be
   * changed, or turned off with `false`. Over one: 429 with `Retry-After`, or on
   * a socket an `error` frame `rate_limited`, then 4008 if it goes on.
   */
  rateLimits?: RateLimits;
  /** The older spelling of `rateLimits.requests` (used when that is absent). */
  rateLimit?: RateLimitOptions;
  /** Caps and timeouts of TCP connections; defaults suit a team server (see `http/connection-guard.ts`). */
  connections?: ConnectionLimits;
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (protocol.md, "Limits"): addresses
   * and CIDR ranges, IPv4 and IPv6 (`['127.0.0.1', '::1']` behind nginx on the same machine).
   * Default none: the client address is always the TCP peer. A malformed entry fails the start.
   */
  trustedProxies?: readonly string[];
  /** How long shutdown waits for in-flight requests before cutting connections. Default 10 s. */
  shutdownGraceMs?: number;
  /** A built web app to serve at `/` (never shadowing `/v1/*` or `/healthz`); see `http/static-web-root.ts`. */
  webRoot?: string;
  /** An identity provider whose JWT access tokens are accepted beside local tokens, and advertised in `/v1/info`. */
  oidc?: OidcOptions;
  /**
   * How often the server reads the token revocation log for revocations another process (the
   * operator CLI) committed to the same database, in ms. Default 1,000: such a revocation takes
   * effect (401, sockets closed with 4003) within about that long. Its own revocations act at once.
   * On PostgreSQL the cluster outbox carries every revocation instead (see `cluster`).
   */
  revocationPollMs?: number;
  /**
   * On a database shared by several instances (PostgreSQL): how often the outbox and the served
   * threads' heads are re-read when no notification arrives (see `cluster/cluster-bus.ts`), and
   * the presence heartbeat and its expiry (see `cluster/cluster-presence.ts`).
   */
  cluster?: ClusterOptions & ClusterPresenceOptions;
}

export interface BubbleServer {
  /** `http://HOST:PORT` */
  readonly url: string;
  /** `ws://HOST:PORT/v1/ws` */
  readonly wsUrl: string;
  readonly host: string;
  readonly port: number;
  /** The SQLite folder; empty on PostgreSQL. */
  readonly dataDir: string;
  readonly store: BubbleStore;
  readonly bus: LiveBus;
  readonly httpServer: Server;
  /** Stops accepting, finishes in-flight requests, closes sockets with 1001, closes the database. */
  close(): Promise<void>;
}

/**
 * Opens the store (SQLite under `dataDir`, or PostgreSQL at `database`), starts listening, and
 * resolves once connections are accepted.
 */
export async function createBubbleServer(options: BubbleServerOptions): Promise<BubbleServer> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const trustedParse = trustedProxiesOf(options.trustedProxies ?? []);
  if (!trustedParse.ok) throw new Error(`trustedProxies: ${trustedParse.error}`);
  const trusted = trustedParse.proxies;
  // Every per-address limit and log line uses the client address, not the proxy's.
  const addressOf = (req: IncomingMessage): string | undefined =>
    clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted);
  const bus = createClusterBus({
    logger: logger.child({ component: 'cluster' }),
    onListenerError: (err) => logger.error({ err }, 'live bus listener failed'),
  });
  const onCommit = (messages: readonly LiveBusMessage[]): void => {
    for (const message of messages) bus.publish(message);
  };
  // PostgreSQL with `database` (a store instances can share), else SQLite under `dataDir`.
  if (options.database === undefined && options.dataDir === undefined)
    throw new Error('createBubbleServer needs dataDir or database');
  const dataDir = options.database === undefined ? resolve(options.dataDir!) : '';
  if (dataDir !== '') makePrivateDir(dataDir);
  const store: BubbleStore =
    options.database === undefined
      ? await openSqliteStore(join(dataDir, DATABASE_FILE_NAME), { onCommit })
      : await openPostgresStore(options.database, {
          ...options.postgres,
          onCommit,
          onError: (err) => logger.warn({ err }, 'a PostgreSQL connection failed; the pool opens another'),
        });

  // Several instances on one database: the bus also publishes what the others commit, and who is online on each.
  const clustered = isClusterStore(store);
  const presence = new PresenceRegistry();
  let clusterPresence: ClusterPresence | null = null;
  if (clustered) {
    try {
      await bus.join(store, options.cluster);
      clusterPresence = await ClusterPresence.start({
        ...options.cluster,
        feed: store,
        registry: presence,
        bus,
        logger: logger.child({ component: 'presence' }),
      });
    } catch (error) {
      await bus.close();
      await store.close();
      throw error;
    }
  }

  const oidc = options.oidc === undefined ? undefined : Object.freeze({ ...options.oidc });
  const oidcAuthenticator =
    oidc === undefined ? undefined : createOidcAuthenticator(store, oidc, logger.child({ component: 'oidc' }));
  // The provider's metadata is fetched now, without waiting: it names the token endpoint the web page's CSP must allow.
  // A provider that is down never stops the server from starting; the first JWT asks again.
  void oidcAuthenticator?.prefetch().then((ok) => {
    if (!ok)
      logger.warn({ issuer: oidc?.issuer }, 'the identity provider could not be reached yet; sign-ins will retry');
  });
  // On a shared database, cached credentials are trusted only while the outbox (which brings the
  // other instances' revocations) has been read to its end within the last second (or two polls).
  const cacheTrustMs = Math.max(1_000, 2 * (options.cluster?.outboxPollMs ?? 250));
  const authenticator = createAuthenticator(store, bus, oidcAuthenticator, Date.now, {
    cacheTrusted: clustered
      ? () => {
          const readAt = bus.outboxReadStartedAt();
          return readAt !== null && Date.now() - readAt < cacheTrustMs;
        }
      : undefined,
  });
  // On a shared database every revocation, the operator CLI's too, comes through the cluster outbox.
  const revocationWatch = clustered
    ? { stop: () => {} }
    : await watchTokenRevocations(store, bus, options.revocationPollMs ?? 1_000, logger);
  const limiters = createRateLimiters({
    ...options.rateLimits,
    ...(options.rateLimits?.requests === undefined && options.rateLimit !== undefined
      ? { requests: options.rateLimit }
      : {}),
  });
  const authenticate = createAuthAttempts(authenticator, limiters.failedAuth);
  const frames = limiters.frames;
  let closing = false;
  // Requests not yet answered, and who waits for that count to reach zero.
  let inFlight = 0;
  let onDrained: (() => void) | undefined;
  const requestDone = (): void => {
    inFlight -= 1;
    if (inFlight === 0) onDrained?.();
  };
  const router = createRoutes({
    store,
    principals: createPrincipalService(store),
    threads: createThreadService(store, (principalId) => presence.isOnline(principalId)),
    events: createEventService(store),
    artifacts: createArtifactService(store),
    invites: createInviteService(store),
    version: SERVER_VERSION,
    oidc,
  });
  const handle = createRequestHandler({
    router,
    authenticate,
    logger,
    rateLimiter: limiters.requests,
    clientAddress: addressOf,
    closing: () => closing,
  });
  const webRoot =
    options.webRoot === undefined
      ? undefined
      : createStaticWebRoot(
          options.webRoot,
          oidcAuthenticator === undefined ? {} : { connectOrigins: () => oidcAuthenticator.browserOrigins() },
        );
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const refusal = guard.admit(req, res);
    if (refusal !== null) {
      const answer = toErrorResponse(rateLimited(refusal.message, refusal.retryAfterSeconds));
      const body = JSON.stringify(answer.body);
      res.writeHead(answer.status, {
        ...answer.headers,
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      res.end(body);
      return;
    }
    inFlight += 1;
    res.once('close', requestDone);
    if (webRoot === undefined) {
      handle(req, res);
      return;
    }
    webRoot(req, res).then(
      (served) => {
        if (!served) handle(req, res);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'static file failed');
        res.destroy();
      },
    );
  };
  // Timeouts are checked every second (Node's default is every 30 s).
  const httpServer = createServer({ connectionsCheckingInterval: 1_000 }, serve);
  const guard = guardConnections(httpServer, options.connections ?? {}, logger, trusted, addressOf);
  // `Expect: 100-continue` (curl sends it for large bodies): invite the body
  // only when its declared size is within the limit; otherwise the handler
  // answers 413 at once and the body is never sent.
  httpServer.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (Number(req.headers['content-length'] ?? 0) <= LIMITS.maxRequestBytes) res.writeContinue();
    serve(req, res);
  });
  httpServer.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // A connection that never sent a byte (a browser's preconnect, or an idle attacker) is closed without a word:
      // an answer left on it would be read as the answer to the next request the browser sends there.
      // One that began a request and stalled is told 408, as Node itself would.
      if ((socket as Socket).bytesRead === 0 || !socket.writable) socket.destroy();
      else socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      return;
    }
    logger.debug({ err }, 'malformed HTTP request');
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  const ws: WebSocketLayer = attachWebSocket(
    httpServer,
    {
      authenticate,
      clientAddress: addressOf,
      admitUpgrade: (request, socket) => {
        const refusal = guard.admit(request);
        if (refusal === null) return true;
        refuseOnSocket(socket, refusal);
        return false;
      },
      takeFrame: frames === undefined ? undefined : (principal, count) => frames.take(budgetKeyOf(principal), count),
      readAccess: async (principalId, threadId) => readAccessOf(await store.getThreadAccess(threadId, principalId)),
      readEvents: (threadId, afterSeq, limit) => store.readEventsAfter(threadId, afterSeq, limit),
      listLiveGrants: (principalId) => store.listLiveGrantsOfPrincipal(principalId),
      presence,
      bus,
      logger: logger.child({ component: 'ws' }),
    },
    options.ws,
  );

  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolveListen, rejectListen) => {
      httpServer.once('error', rejectListen);
      httpServer.listen(options.port ?? 7777, host, () => {
        httpServer.off('error', rejectListen);
        resolveListen();
      });
    });
  } catch (error) {
    revocationWatch.stop();
    await ws.close(1001, 'server failed to start');
    await clusterPresence?.close();
    authenticator.close();
    await bus.close();
    await store.close();
    throw error;
  }
  const port = (httpServer.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      const stopped = new Promise<void>((r) => httpServer.close(() => r()));
      httpServer.closeIdleConnections();
      await ws.close(1001, 'server shutting down');
      const grace = new Promise<'timeout'>((r) =>
        setTimeout(() => r('timeout'), options.shutdownGraceMs ?? 10_000).unref(),
      );
      const drained = new Promise<'drained'>((r) => {
        if (inFlight === 0) r('drained');
        else onDrained = () => r('drained');
      });
      if ((await Promise.race([drained, grace])) === 'timeout')
        logger.warn('shutdown grace period over; cutting connections');
      httpServer.closeAllConnections();
      await stopped;
      revocationWatch.stop();
      // After the sockets: their going offline is written first, then this instance's rows go.
      await clusterPresence?.close();
      authenticator.close();
      await bus.close();
      await store.close();
    })();
    return closed;
  };

  return {
    url: `http://${urlHost}:${port}`,
    wsUrl: `ws://${urlHost}:${port}/v1/ws`,
    host,
    port,
    dataDir,
    store,
    bus,
    httpServer,
    close,
  };
}
