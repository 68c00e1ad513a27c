import pg from 'pg';
import { isConnectionLost, isQueryTimeout, StoreUnavailableError, toStoreError } from './postgres-errors.js';

export interface PostgresPoolOptions {
  /** Connections in the pool, the group-commit writer's one included (at least 2). Default 10. */
  poolSize?: number;
  /**
   * The server cancels a statement that runs longer (ms, 0 = never). Default 30,000. The client
   * gives a connection up when a query gets no answer for longer still (`queryTimeoutMs`).
   */
  statementTimeoutMs?: number;
  /**
   * The server ends a session left idle inside a transaction for longer (ms, 0 = the server's own
   * setting). Default 10,000. The writer's transactions are idle only while this process runs a
   * group's jobs between two round trips (milliseconds); one stuck there (the process stalled, a
   * half-open connection) would hold its threads' row locks against every instance, whose lock
   * waits give up only after the statement timeout.
   */
  idleInTransactionTimeoutMs?: number;
  /** How long a request waits for a free connection (or a new one to open) before a 503. Default 10,000. */
  connectionTimeoutMs?: number;
  /** Told of errors on idle connections (the database restarting, a killed backend); they never crash the process. */
  onError?: (error: Error) => void;
}

export const POSTGRES_DEFAULTS = Object.freeze({
  poolSize: 10,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 10_000,
  connectionTimeoutMs: 10_000,
});

const INT8_OID = 20;

/** How the pool's connections show up in `pg_stat_activity`. */
export const POOL_APPLICATION_NAME = 'bubble-server';
/** How the group-commit writer's connection shows up in `pg_stat_activity`. */
export const WRITER_APPLICATION_NAME = 'bubble-server-writer';

/** With no statement timeout, a query the database has not answered in five minutes is given up all the same. */
const QUERY_TIMEOUT_WITHOUT_STATEMENT_TIMEOUT_MS = 300_000;

/**
 * How long the client waits for the answer to a query (ms) before it gives the connection up: half
 * as long again as the server's statement timeout, and at least a second more, so that the
 * server's own cancel (57014, which keeps the connection) comes first whenever the server is
 * there to send it. This is for a database that answers nothing at all (a partition, a half-open
 * TCP connection, a stopped backend), which `statement_timeout` cannot help with: the query fails
 * with a 503 and its connection is closed, not given back to the pool. On the pipelined writer a
 * query's wait also covers the statements sent ahead of it, which the margin leaves room for.
 */
export function queryTimeoutMs(statementTimeoutMs: number): number {
  if (statementTimeoutMs <= 0) return QUERY_TIMEOUT_WITHOUT_STATEMENT_TIMEOUT_MS;
  return statementTimeoutMs + Math.max(1_000, Math.round(statementTimeoutMs / 2));
}

/**
 * A pool whose bigint columns (seqs, ids) read as numbers, not strings: they stay far below 2^53.
 * Set per pool, never on the driver's global type table. `connections` sizes it (default: the
 * option's `poolSize`); `pipeline` lets a connection take statements before the previous answer
 * arrives (`postgres-pipeline.ts`). Every query has a client-side timeout (`queryTimeoutMs`);
 * node-postgres closes a pipelined connection whose query times out, and the store closes the
 * others (`poolReader`, the group commit's release of a broken connection).
 */
export function createPool(
  connectionString: string,
  options: PostgresPoolOptions = {},
  shape: { connections?: number; pipeline?: boolean; applicationName?: string } = {},
): pg.Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? POSTGRES_DEFAULTS.statementTimeoutMs;
  const pool = new pg.Pool({
    connectionString,
    max: shape.connections ?? Math.max(2, options.poolSize ?? POSTGRES_DEFAULTS.poolSize),
    pipeline: shape.pipeline ?? false,
    statement_timeout: statementTimeoutMs,
    query_timeout: queryTimeoutMs(statementTimeoutMs),
    idle_in_transaction_session_timeout:
      options.idleInTransactionTimeoutMs ?? POSTGRES_DEFAULTS.idleInTransactionTimeoutMs,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? POSTGRES_DEFAULTS.connectionTimeoutMs,
    application_name: shape.applicationName ?? POOL_APPLICATION_NAME,
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as never,
    },
  });
  // Without a listener, an idle connection's error (a killed backend, a restart) would crash the process.
  pool.on('error', (error) => options.onError?.(error));
  return pool;
}

/** Reads outside any transaction, each on whatever pooled connection is free. */
export interface Reader {
  query<R>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * A read that fails because its connection was already dead (killed while idle in the pool) is
 * sent once more on a fresh one: a read can always be repeated. One that timed out is not (see
 * `isQueryTimeout`); its connection is closed all the same. Errors come out as the store's:
 * a database that cannot be connected to at all (down, refusing connections, gone, answering
 * nothing) is a 503.
 * The statements named in `prepared` (text to name) are parsed and planned once per connection.
 */
export function poolReader(pool: pg.Pool, prepared: ReadonlyMap<string, string> = new Map()): Reader {
  return {
    async query<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
      const name = prepared.get(sql);
      for (let attempt = 0; ; attempt += 1) {
        const client = await connectOrUnavailable(pool);
        // A checked-out client's own 'error' event has no listener in the pool: without this one it would crash us.
        const onError = (): void => {};
        client.on('error', onError);
        let broken: Error | undefined;
        try {
          const query = name === undefined ? sql : { text: sql, name };
          return (await client.query(query, params as unknown[])).rows as R[];
        } catch (error) {
          if (isConnectionLost(error)) broken = error as Error;
          if (attempt === 0 && broken !== undefined && !isQueryTimeout(error)) continue;
          throw toStoreError(error);
        } finally {
          client.off('error', onError);
          client.release(broken);
        }
      }
    },
  };
}

/** A pooled connection; failing to get one (the database down, refusing connections, gone) is a 503. */
export async function connectOrUnavailable(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    throw new StoreUnavailableError(error);
  }
}
