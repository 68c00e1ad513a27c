/**
 * A writer stuck inside its transaction holds its threads' row locks against every instance. Here
 * the store reaches PostgreSQL through a TCP proxy that leaves the writer's connection half-open
 * once the writer sends its COMMIT: the database has the group's BEGIN and locks, and never
 * hears of it again. Its `idle_in_transaction_session_timeout` ends that session, and with it the
 * locks, long before the store gives the connection up.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, freshSchema, type TestDatabase } from '../../../test/support/test-postgres.js';
import { CuttableProxy } from '../../testing/cuttable-proxy.js';
import { StoreUnavailableError } from './postgres-errors.js';
import { createPool, queryTimeoutMs } from './postgres-pool.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';

const IDLE_IN_TRANSACTION_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 2_000;

let db: TestDatabase;
let schema: TestDatabase;
let proxy: CuttableProxy;
let store: PostgresStore;
let admin: pg.Client;

beforeAll(async () => {
  db = await freshDatabase('idle-in-transaction');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  schema = await freshSchema(db.url, 'idle');
  const front = await CuttableProxy.inFrontOf(schema.url);
  proxy = front.proxy;
  store = await openPostgresStore(front.url, {
    poolSize: 3,
    statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs: IDLE_IN_TRANSACTION_TIMEOUT_MS,
  });
  await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
  await store.createThread({ threadId: 'th_1', parentThreadId: null, title: null, createdBy: 'alice', key: null });
  admin = new pg.Client({ connectionString: schema.url });
  await admin.connect();
});
afterEach(async () => {
  await admin.end();
  await store.close();
  await proxy.cut();
  await schema.drop();
});

const append = (text: string) =>
  store.appendEvents({ threadId: 'th_1', principalId: 'alice', events: [{ type: 'acme.note', data: { text } }] });

/** Whether th_1's row lock is free: another instance's group could take it now. */
async function threadLockFree(): Promise<boolean> {
  await admin.query('BEGIN');
  try {
    await admin.query("SELECT 1 FROM threads WHERE thread_id = 'th_1' FOR UPDATE NOWAIT");
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') return false;
    throw error;
  } finally {
    await admin.query('ROLLBACK');
  }
}

describe("the writer's idle_in_transaction_session_timeout", () => {
  it('ends a writer session stuck inside its transaction, freeing its thread locks for every instance', async () => {
    const hung = proxy.breakNext({ sent: Buffer.from('COMMIT\0'), deliver: false, hang: true });
    const stuck = append('stuck').then(
      () => 'committed',
      (error: unknown) => error,
    );
    await hung;
    const hungAt = performance.now();
    expect(await threadLockFree()).toBe(false);
    // The store itself would give up only after its query timeout, and could not tell the database then.
    for (const deadline = hungAt + 3_000; !(await threadLockFree()); ) {
      if (performance.now() > deadline) throw new Error('the stuck writer still holds the lock of th_1');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(performance.now() - hungAt).toBeLessThan(queryTimeoutMs(STATEMENT_TIMEOUT_MS));
    // Its COMMIT never arrived: once the store gives up, the database says so, and it is a 503.
    expect(await stuck).toBeInstanceOf(StoreUnavailableError);
    const { rows } = await admin.query("SELECT 1 FROM events WHERE thread_id = 'th_1' AND type = 'acme.note'");
    expect(rows).toEqual([]);
    expect((await append('next')).events[0]!.seq).toBe(2);
  });

  it("is set on every connection, the pool's and the writer's: 10 s unless configured", async () => {
    const show = async (pool: pg.Pool): Promise<string> => {
      try {
        const { rows } = await pool.query<{ idle_in_transaction_session_timeout: string }>(
          'SHOW idle_in_transaction_session_timeout',
        );
        return rows[0]!.idle_in_transaction_session_timeout;
      } finally {
        await pool.end();
      }
    };
    expect(await show(createPool(db.url))).toBe('10s');
    expect(
      await show(createPool(db.url, { idleInTransactionTimeoutMs: 300 }, { connections: 1, pipeline: true })),
    ).toBe('300ms');
  });
});
