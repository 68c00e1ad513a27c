import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import { toErrorResponse } from '../../errors/bubble-error.js';
import { StoreUnavailableError } from './postgres-errors.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';

let db: TestDatabase;
let store: PostgresStore;
let poolErrors: Error[];
let name: string;

/** Runs SQL on the server's `postgres` database: the test's own may be refusing connections. */
async function admin(sql: string): Promise<void> {
  const url = new URL(db.url);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
const killBackends = () =>
  admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);

beforeEach(async () => {
  db = await freshDatabase('outage');
  name = new URL(db.url).pathname.slice(1);
  poolErrors = [];
  store = await openPostgresStore(db.url, { poolSize: 4, onError: (error) => poolErrors.push(error) });
  await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
  await store.createThread({ threadId: 'th_1', parentThreadId: null, title: null, createdBy: 'alice', key: null });
});
afterEach(async () => {
  await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
  await store.close();
  await db.drop();
});

const note = (text: string) => ({ type: 'acme.note', data: { text } });
const append = (text: string) => store.appendEvents({ threadId: 'th_1', principalId: 'alice', events: [note(text)] });

describe('PostgreSQL store when the database goes away', () => {
  it('reconnects by itself when its connections are killed while idle', async () => {
    // Open several pooled connections, then kill every one of them.
    await Promise.all([store.getThread('th_1'), store.listPrincipals(), store.getCursor('th_1', 'alice'), append('a')]);
    await killBackends();
    expect((await store.getThread('th_1'))?.headSeq).toBe(2);
    expect((await append('b')).events[0]!.seq).toBe(3);
    expect(await store.listPrincipals()).toHaveLength(1);
    // The idle connections' errors were handed to onError, not thrown at the process.
    for (let i = 0; i < 50 && poolErrors.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(poolErrors.length).toBeGreaterThan(0);
  });

  it('answers 503 while the database refuses connections, and serves again once it accepts them', async () => {
    await append('before');
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await killBackends();
    const refusals = await Promise.all([
      store.getThread('th_1').catch((e: unknown) => e),
      append('during').catch((e: unknown) => e),
      store.ping().catch((e: unknown) => e),
      store.readEventsAfter('th_1', 0, 10).catch((e: unknown) => e),
      store.putCursor('th_1', 'alice', 1).catch((e: unknown) => e),
    ]);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(StoreUnavailableError);
      const response = toErrorResponse(refusal);
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.body.error.code).toBe('internal');
    }
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    expect((await append('after')).events[0]!.seq).toBe(3);
    expect((await store.readEventsAfter('th_1', 1, 10)).events.map((e) => e.data.text)).toEqual(['before', 'after']);
    await store.ping();
  });

  /**
   * Holds th_1's row lock from another connection, so the store's next group waits inside its
   * transaction; then kills the store's connections (not the holder's) while it waits.
   */
  async function killMidTransaction(writes: () => Promise<unknown>[], refuseNewConnections: boolean) {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await holder.query('BEGIN');
    await holder.query("SELECT 1 FROM threads WHERE thread_id = 'th_1' FOR UPDATE");
    // Settled at once, so a refusal that comes while we wait is never an unhandled rejection.
    const pending = Promise.allSettled(writes());
    for (let waiting = 0; waiting === 0; ) {
      await new Promise((r) => setTimeout(r, 10));
      const { rows } = await holder.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      waiting = rows[0]!.n;
    }
    if (refuseNewConnections) await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> ${holderPid}`,
    );
    await holder.query('COMMIT');
    await holder.end();
    return pending;
  }

  it('runs a group whose connection died before COMMIT again on a new one: nothing lost, nothing doubled', async () => {
    const results = await killMidTransaction(() => Array.from({ length: 50 }, (_, i) => append(String(i))), false);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'fulfilled'));
    const stored = (await store.readEventsAfter('th_1', 1, 1_000)).events;
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    expect(stored.map((e) => e.data.text).sort()).toEqual(Array.from({ length: 50 }, (_, i) => String(i)).sort());
  });

  it('refuses such a group with 503 when no new connection can be had; none of it commits', async () => {
    const results = await killMidTransaction(() => Array.from({ length: 20 }, (_, i) => append(String(i))), true);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    }
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    expect((await store.readEventsAfter('th_1', 0, 100)).headSeq).toBe(1);
    expect((await append('after')).events[0]!.seq).toBe(2);
  });
});
