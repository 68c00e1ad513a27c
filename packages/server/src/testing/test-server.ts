import type { ConnectionLimits } from '../http/connection-guard.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Principal, Token } from '@bubble/protocol';
import type { Logger } from 'pino';
import { createBubbleServer, type BubbleServer } from '../create-bubble-server.js';
import { createHumanPrincipal } from '../services/principal-service.js';
import type { WsOptions } from '../ws/ws-deps.js';
import type { RateLimitOptions, RateLimits } from '../http/rate-limiter.js';
import type { OidcOptions } from '../oidc/oidc-options.js';

export interface TestServerOptions {
  logger?: Logger;
  ws?: WsOptions;
  /** The server's rate limits (on by default, as in production); see `createBubbleServer`. */
  rateLimits?: RateLimits;
  /** The older spelling of `rateLimits.requests`. */
  rateLimit?: RateLimitOptions;
  connections?: ConnectionLimits;
  /** Proxies whose `X-Forwarded-For` names the client (none by default, as in production). */
  trustedProxies?: readonly string[];
  /** Reuse this data folder instead of a fresh temp one (it is then not removed by `stop`). */
  dataDir?: string;
  /** A PostgreSQL connection string: the store is there instead of a SQLite file (see `test/support/test-postgres.ts`). */
  database?: string;
  /** An identity provider to accept JWTs from (see `oidc-test-provider.ts` for a real one to point it at). */
  oidc?: OidcOptions;
  /** How often revocations committed by another process are picked up; default 1 s. */
  revocationPollMs?: number;
}

export interface TestServer {
  /** `http://127.0.0.1:PORT`; the same port across `restart()`. */
  readonly url: string;
  readonly wsUrl: string;
  readonly dataDir: string;
  /** The running server (replaced by `restart()`). */
  readonly server: BubbleServer;
  /** Creates a human principal as the operator CLI does; the token's plaintext is in `token.token`. */
  createHuman(principalId: string, displayName?: string): Promise<{ principal: Principal; token: Token }>;
  /** Graceful stop; removes the temp data folder. */
  stop(): Promise<void>;
  /** Graceful stop, then a new server on the same data folder and port. */
  restart(): Promise<void>;
}

/** The real server on 127.0.0.1, an ephemeral port and a real SQLite file in a temp folder (or `database`). */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const ownsDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'bubble-test-')));
  const start = (port: number) =>
    createBubbleServer({
      dataDir,
      database: options.database,
      host: '127.0.0.1',
      port,
      logger: options.logger,
      ws: options.ws,
      rateLimits: options.rateLimits,
      rateLimit: options.rateLimit,
      connections: options.connections,
      trustedProxies: options.trustedProxies,
      oidc: options.oidc,
      revocationPollMs: options.revocationPollMs,
      shutdownGraceMs: 5_000,
    });
  let server = await start(0);
  let stopped = false;
  return {
    get url() {
      return server.url;
    },
    get wsUrl() {
      return server.wsUrl;
    },
    dataDir,
    get server() {
      return server;
    },
    createHuman: (principalId, displayName) => createHumanPrincipal(server.store, principalId, displayName ?? null),
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.close();
      if (ownsDir) await rm(dataDir, { recursive: true, force: true });
    },
    async restart() {
      const port = server.port;
      await server.close();
      server = await start(port);
    },
  };
}
