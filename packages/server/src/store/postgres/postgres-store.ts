import type { ClusterFeed, PresenceFeed } from '../cluster-feed.js';
import type { BubbleStore, StoreOpenOptions } from '../store.js';
import type { PostgresStoreContext } from './postgres-context.js';
import { toStoreError } from './postgres-errors.js';
import { eventMethods } from './postgres-events.js';
import { PostgresGroupCommit, type WriteJob } from './postgres-group-commit.js';
import { invitationMethods } from './postgres-invitations.js';
import { inviteMethods } from './postgres-invites.js';
import { migratePostgres } from './postgres-migrate.js';
import { outboxMethods } from './postgres-outbox.js';
import { peopleMethods } from './postgres-people.js';
import { presenceMethods } from './postgres-presence.js';
import {
  createPool,
  POSTGRES_DEFAULTS,
  poolReader,
  type PostgresPoolOptions,
  WRITER_APPLICATION_NAME,
} from './postgres-pool.js';
import { SQL } from './postgres-sql.js';
import { threadMethods } from './postgres-threads.js';

/** The store several server instances share: every `BubbleStore` method, the feed of the others' commits, and who is online where. */
export type PostgresStore = BubbleStore & ClusterFeed & PresenceFeed;

export interface PostgresStoreOptions extends StoreOpenOptions, PostgresPoolOptions {}

/**
 * Opens the PostgreSQL store at `connectionString`, applying pending migrations first (under an
 * advisory lock, so instances starting together migrate once). Reads go to any pooled
 * connection; writes go through one group commit (`postgres-group-commit.ts`) on a connection of
 * its own (one of `poolSize`), so a write never waits for a read to give a connection back. A database that cannot be reached is answered 503 (`StoreUnavailableError`),
 * never a crash; the pool reconnects by itself.
 */
export async function openPostgresStore(
  connectionString: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresStore> {
  // The group commit holds one connection at a time, its own, pipelined; the reads share the rest.
  const poolSize = Math.max(2, options.poolSize ?? POSTGRES_DEFAULTS.poolSize);
  const pool = createPool(connectionString, options, { connections: poolSize - 1 });
  const writerPool = createPool(connectionString, options, {
    connections: 1,
    pipeline: true,
    applicationName: WRITER_APPLICATION_NAME,
  });
  try {
    await migratePostgres(pool);
  } catch (error) {
    await Promise.all([pool.end(), writerPool.end()]).catch(() => {});
    throw toStoreError(error);
  }
  const now = options.now ?? (() => new Date());
  const onCommit = options.onCommit;
  const writes = new PostgresGroupCommit(writerPool, now, (messages) => onCommit?.(messages));
  let closed = false;
  // The reads other instances' commits cause, many a second under load: parsed and planned once per connection.
  const db = poolReader(
    pool,
    new Map([
      [SQL.eventsAfter, 'bubble_r_events_after'],
      [SQL.threadHeads, 'bubble_r_thread_heads'],
      [SQL.outboxAfter, 'bubble_r_outbox_after'],
    ]),
  );
  const write = <T>(job: WriteJob<T>): Promise<T> => {
    if (closed) return Promise.reject(new Error('store is closed'));
    return writes.enqueue(job);
  };
  const context: PostgresStoreContext = { db, write, now };

  return {
    ...peopleMethods(context),
    ...inviteMethods(context),
    ...invitationMethods(context),
    ...threadMethods(context),
    ...eventMethods(context),
    ...presenceMethods(context),

    ...outboxMethods(context),
    threadHeads: async (threadIds) =>
      new Map(
        (await db.query<{ thread_id: string; head_seq: number }>(SQL.threadHeads, [threadIds])).map((row) => [
          row.thread_id,
          row.head_seq,
        ]),
      ),
    connectionString,

    ping: async () => {
      await db.query(SQL.ping);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await writes.drained();
      await Promise.all([pool.end(), writerPool.end()]);
    },
  };
}
