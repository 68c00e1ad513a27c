import { join, resolve } from 'node:path';
import type pg from 'pg';
import { DATABASE_FILE_NAME } from '../../create-bubble-server.js';
import { isConnectionLost } from '../../store/postgres/postgres-errors.js';
import { migratePostgres } from '../../store/postgres/postgres-migrate.js';
import { createPool } from '../../store/postgres/postgres-pool.js';
import { POSTGRES_MIGRATIONS } from '../../store/postgres/postgres-schema.js';
import { latestVersion } from '../../store/migrations/migration-plan.js';
import { makePrivateDir, openPrivateDatabase } from '../../store/sqlite/private-files.js';
import { prepareDatabase, SCHEMA_VERSION } from '../../store/sqlite/sqlite-schema.js';
import type { DumpRow, DumpTable } from './dump-tables.js';

/** Reads of one consistent snapshot of a database. */
export interface DumpReader {
  /**
   * Rows of a table (of one thread, for per-thread tables), in the table's order; with `page`, the
   * events after `afterSeq`, `limit` at a time.
   */
  rows(table: DumpTable, threadId?: string, page?: { afterSeq: number; limit: number }): Promise<DumpRow[]>;
}

export interface DumpWriter {
  /** Whether no table of the dump holds a row (under the transaction's lock: no other import lands meanwhile). */
  isEmpty(tables: readonly DumpTable[]): Promise<boolean>;
  /** Inserts rows (decoded: bytes as Buffers, flags as booleans) into a table. */
  insert(table: DumpTable, rows: readonly DumpRow[]): Promise<void>;
}

/** A database the operator moves data out of or into, the same way on SQLite and PostgreSQL. */
export interface DumpBackend {
  readonly kind: 'sqlite' | 'postgres';
  readonly schemaVersion: number;
  /** Runs `body` on one snapshot (a read transaction), so a running server's writes do not tear the dump. */
  snapshot<T>(body: (reader: DumpReader) => Promise<T>): Promise<T>;
  /**
   * Runs `body` in one write transaction: all of it lands, or none. It first takes a lock that one
   * such transaction holds at a time, so that two imports started together into one new database
   * cannot both find it empty: the second waits, then sees the first one's rows.
   */
  transaction(tables: readonly DumpTable[], body: (writer: DumpWriter) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** Taken by each import's transaction; beside the store's own keys (7_352_114_000 to _002). */
const IMPORT_LOCK_KEY = 7_352_114_003;

const orderOf = (table: DumpTable, ord: string): string => table.order.replace('$ord', ord);

/** Opens (creating and migrating) the SQLite database in `dataDir`. */
export function openSqliteBackend(dataDir: string): DumpBackend {
  const dir = resolve(dataDir);
  makePrivateDir(dir);
  const db = openPrivateDatabase(join(dir, DATABASE_FILE_NAME));
  prepareDatabase(db);
  const select = (table: DumpTable, where: string): string =>
    `SELECT ${table.columns.join(', ')} FROM ${table.name} ${where} ORDER BY ${orderOf(table, 'rowid')}`;
  const reader: DumpReader = {
    rows: async (table, threadId, page) => {
      if (page) {
        return db
          .prepare(`${select(table, 'WHERE thread_id = ? AND seq > ?')} LIMIT ?`)
          .all(threadId, page.afterSeq, page.limit) as DumpRow[];
      }
      return (
        threadId === undefined
          ? db.prepare(select(table, '')).all()
          : db.prepare(select(table, 'WHERE thread_id = ?')).all(threadId)
      ) as DumpRow[];
    },
  };
  return {
    kind: 'sqlite',
    schemaVersion: SCHEMA_VERSION,
    snapshot: async (body) => {
      db.exec('BEGIN');
      try {
        return await body(reader);
      } finally {
        db.exec('COMMIT');
      }
    },
    transaction: async (_tables, body) => {
      // IMMEDIATE takes the database's write lock now (another process waits, busy_timeout): the lock.
      db.exec('BEGIN IMMEDIATE');
      try {
        await body({
          isEmpty: async (tables) =>
            tables.every((t) => db.prepare(`SELECT 1 FROM ${t.name} LIMIT 1`).get() === undefined),
          insert: async (table, rows) => {
            const insert = db.prepare(
              `INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')})`,
            );
            for (const row of rows) {
              insert.run(
                ...table.columns.map((c) => (typeof row[c] === 'boolean' ? (row[c] ? 1 : 0) : (row[c] as unknown))),
              );
            }
          },
        });
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
    close: async () => {
      db.close();
    },
  };
}

/** Opens (and migrates) the PostgreSQL database at `url`. */
export async function openPostgresBackend(url: string): Promise<DumpBackend> {
  // The export's transaction stays open, idle, while its rows are written out, as long as that takes
  // (set again on each connection in `withClient`).
  const pool = createPool(url, { poolSize: 2, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 });
  try {
    await migratePostgres(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const select = (table: DumpTable, where: string): string =>
    `SELECT ${table.columns.join(', ')} FROM ${table.name} ${where} ORDER BY ${orderOf(table, 'ord')}`;
  const withClient = async <T>(begin: string, body: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    // The pool listens for 'error' only on idle clients: a connection lost while this one waits between
    // queries (an import on its input, an export on its output) would otherwise crash the command.
    // The next query fails then; the loss itself says more than that failure ("not queryable").
    let lost: Error | undefined;
    const onLost = (error: Error) => {
      lost ??= error;
    };
    client.on('error', onLost);
    let failed: Error | undefined;
    try {
      // Zero in the pool's options sends nothing (the role's or database's own timeouts would apply): say it.
      await client.query('SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0');
      await client.query(begin);
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failed = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => {});
      throw lost !== undefined && isConnectionLost(error) ? lost : error;
    } finally {
      client.off('error', onLost);
      // After a failure (a query timeout may leave its query running) the connection is closed, not pooled.
      client.release(failed);
    }
  };
  return {
    kind: 'postgres',
    schemaVersion: latestVersion(POSTGRES_MIGRATIONS),
    snapshot: (body) =>
      withClient('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', (client) =>
        body({
          rows: async (table, threadId, page) => {
            if (page) {
              const sql = `${select(table, 'WHERE thread_id = $1 AND seq > $2')} LIMIT $3`;
              return (await client.query(sql, [threadId, page.afterSeq, page.limit])).rows;
            }
            return threadId === undefined
              ? (await client.query(select(table, ''))).rows
              : (await client.query(select(table, 'WHERE thread_id = $1'), [threadId])).rows;
          },
        }),
      ),
    transaction: (tables, body) =>
      withClient('BEGIN', async (client) => {
        // Not a lock on the tables: a server already running on the target (which the import refuses) is not held up.
        await client.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK_KEY]);
        await body({
          isEmpty: async (checked) => {
            for (const t of checked) {
              if ((await client.query(`SELECT 1 FROM ${t.name} LIMIT 1`)).rowCount) return false;
            }
            return true;
          },
          insert: async (table, rows) => {
            // Up to 500 rows a statement keeps within PostgreSQL's 65,535 parameters for every table here.
            for (let start = 0; start < rows.length; start += 500) {
              const chunk = rows.slice(start, start + 500);
              const width = table.columns.length;
              const values = chunk
                .map((_, r) => `(${table.columns.map((_c, c) => `$${r * width + c + 1}`).join(', ')})`)
                .join(', ');
              const overriding = table.identity === undefined ? '' : ' OVERRIDING SYSTEM VALUE';
              await client.query(
                `INSERT INTO ${table.name} (${table.columns.join(', ')})${overriding} VALUES ${values}`,
                chunk.flatMap((row) => table.columns.map((c) => row[c])),
              );
            }
          },
        });
        // Carried identity values: the next one generated must come after them.
        for (const t of tables) {
          if (t.identity === undefined) continue;
          await client.query(
            `SELECT setval(pg_get_serial_sequence('${t.name}', '${t.identity}'),
               (SELECT coalesce(max(${t.identity}), 0) + 1 FROM ${t.name}), false)`,
          );
        }
      }),
    close: () => pool.end(),
  };
}
