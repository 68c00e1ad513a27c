import pg from 'pg';
import type { Logger } from 'pino';
import { CLUSTER_CHANNEL, type ClusterHint } from '../store/cluster-feed.js';

/** How the LISTEN connection shows up in `pg_stat_activity`. */
export const LISTENER_APPLICATION_NAME = 'bubble-cluster-listener';

export interface ClusterListenerOptions {
  connectionString: string;
  onHint(hint: ClusterHint): void;
  /**
   * After every LISTEN that succeeds, the first included: notifications sent while there was
   * none are gone, so whoever listens re-reads what they stand for.
   */
  onListening(): void;
  logger: Logger;
  /** How often the connection is proved alive with a query (a half-open TCP connection delivers nothing and says nothing). Default 5,000 ms. */
  healthCheckMs?: number;
  /** The first wait before reconnecting; it doubles up to `maxBackoffMs`. Default 100 ms. */
  minBackoffMs?: number;
  /** Default 5,000 ms. */
  maxBackoffMs?: number;
}

export interface ClusterListener {
  /** Whether a LISTEN connection is up now. */
  readonly listening: boolean;
  close(): Promise<void>;
}

/**
 * The one connection per instance that LISTENs on {@link CLUSTER_CHANNEL}. When it drops (the
 * database restarted, the backend was terminated, the network failed), it is opened again with
 * exponential backoff and `onListening` tells the owner to catch up; a health query every few
 * seconds notices a connection that died without a word. A payload that cannot be parsed is
 * handed on as `overflow` (re-check everything), never dropped.
 */
export async function startClusterListener(options: ClusterListenerOptions): Promise<ClusterListener> {
  const { logger } = options;
  const healthCheckMs = options.healthCheckMs ?? 5_000;
  const minBackoffMs = options.minBackoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 5_000;
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let backoffMs = minBackoffMs;
  let reconnectTimer: NodeJS.Timeout | null = null;
  let checking = false;

  const drop = (current: pg.Client, reason: unknown): void => {
    if (client !== current) return;
    client = null;
    listening = false;
    current.removeAllListeners('notification');
    // A dead connection's `end` may never answer; nothing waits for it.
    current.end().catch(() => {});
    if (closed) return;
    logger.warn({ err: reason, retryInMs: backoffMs }, 'the cluster LISTEN connection dropped; reconnecting');
    scheduleConnect();
  };

  const scheduleConnect = (): void => {
    if (reconnectTimer !== null || closed) return;
    const wait = backoffMs;
    backoffMs = Math.min(maxBackoffMs, backoffMs * 2);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      void connect();
    }, wait);
    reconnectTimer.unref();
  };

  const connect = async (): Promise<void> => {
    const current = new pg.Client({
      connectionString: options.connectionString,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      query_timeout: Math.max(1_000, healthCheckMs),
    });
    client = current;
    current.on('error', (error) => drop(current, error));
    current.on('end', () => drop(current, new Error('connection ended')));
    current.on('notification', (message) => {
      if (message.channel === CLUSTER_CHANNEL) options.onHint(parseHint(message.payload, logger));
    });
    try {
      await current.connect();
      await current.query(`LISTEN ${CLUSTER_CHANNEL}`);
    } catch (error) {
      drop(current, error);
      return;
    }
    if (client !== current || closed) return;
    listening = true;
    backoffMs = minBackoffMs;
    logger.debug('listening for cluster notifications');
    options.onListening();
  };

  const health = setInterval(() => {
    const current = client;
    if (current === null || !listening || checking) return;
    checking = true;
    current.query('SELECT 1').then(
      () => {
        checking = false;
      },
      (error: unknown) => {
        checking = false;
        drop(current, error);
      },
    );
  }, healthCheckMs);
  health.unref();

  await connect();
  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      clearInterval(health);
      if (reconnectTimer !== null) clearTimeout(reconnectTimer);
      const current = client;
      client = null;
      listening = false;
      if (current !== null) {
        current.removeAllListeners('notification');
        await current.end().catch(() => {});
      }
    },
  };
}

const OVERFLOW: ClusterHint = Object.freeze({ heads: [], overflow: true });

/** The hint in a payload; anything else is read as `overflow`, so the listener re-checks rather than misses. */
export function parseHint(payload: string | undefined, logger?: Logger): ClusterHint {
  try {
    const value = JSON.parse(payload ?? '') as Partial<ClusterHint>;
    const heads = Array.isArray(value.heads) ? value.heads : [];
    if (
      Array.isArray(value.heads) &&
      heads.every((h) => typeof h?.threadId === 'string' && Number.isSafeInteger(h?.headSeq)) &&
      (value.outbox === undefined || Number.isSafeInteger(value.outbox))
    ) {
      const hint: ClusterHint = { heads };
      if (value.outbox !== undefined) hint.outbox = value.outbox;
      if (value.overflow === true) hint.overflow = true;
      return hint;
    }
  } catch {
    // fall through
  }
  logger?.warn({ payload: payload?.slice(0, 200) }, 'a cluster notification could not be read; re-checking everything');
  return OVERFLOW;
}
