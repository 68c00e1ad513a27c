import pg from 'pg';
import { isConnectionLost, StoreUnavailableError, toStoreError } from './postgres-errors.js';

export interface PostgresPoolOptions {
  /** Connections in the pool, the group-commit writer's one included (at least 2). Default 10. */
  poolSize?: number;
  /** The server cancels a statement that runs longer (ms, 0 = never). Default 30,000. */
  statementTimeoutMs?: number;
  /** How long a request waits for a free connection (or a new one to open) before a 503. Default 10,000. */
  connectionTimeoutMs?: number;
  /** Told of errors on idle connections (the database restarting, a killed backend); they never crash the process. */
  onError?: (error: Error) => void;
}

export const POSTGRES_DEFAULTS = Object.freeze({
  poolSize: 10,
  statementTimeoutMs: 30_000,
  connectionTimeoutMs: 10_000,
});

const INT8_OID = 20;

/**
 * A pool whose bigint columns (seqs, ids) read as numbers, not strings: they stay far below 2^53.
 * Set per pool, never on the driver's global type table. `connections` sizes it (default: the
 * option's `poolSize`); `pipeline` lets a connection take statements before the previous answer
 * arrives (`postgres-pipeline.ts`).
 */
export function createPool(
  connectionString: string,
  options: PostgresPoolOptions = {},
  shape: { connections?: number; pipeline?: boolean } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: shape.connections ?? Math.max(2, options.poolSize ?? POSTGRES_DEFAULTS.poolSize),
    pipeline: shape.pipeline ?? false,
    statement_timeout: options.statementTimeoutMs ?? POSTGRES_DEFAULTS.statementTimeoutMs,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? POSTGRES_DEFAULTS.connectionTimeoutMs,
    application_name: 'bubble-server',
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
 * sent once more on a fresh one: a read can always be repeated. Errors come out as the store's:
 * a database that cannot be connected to at all (down, refusing connections, gone) is a 503.
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
          if (attempt === 0 && broken !== undefined) continue;
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
