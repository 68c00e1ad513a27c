/**
 * A COMMIT whose answer never comes back: the store reaches PostgreSQL through a TCP proxy that
 * breaks the writer's connection on its COMMIT, either after the database has committed (its
 * answer dropped) or before the COMMIT reaches it. The store asks the database what became of
 * the transaction: an append that committed is answered as committed, once; one that did not
 * is answered 503 and leaves nothing; and when the database cannot be asked either, 503 as before.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, freshSchema, type TestDatabase } from '../../../test/support/test-postgres.js';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { CuttableProxy } from '../../testing/cuttable-proxy.js';
import { StoreUnavailableError } from './postgres-errors.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';

/** The writer's COMMIT as it goes on the wire (a simple query), and the tag of its answer. */
const COMMIT = Buffer.from('COMMIT\0');

let db: TestDatabase;
let schema: TestDatabase;
let proxy: CuttableProxy;
let store: PostgresStore;
let admin: pg.Client;
let published: LiveBusMessage[][];

beforeAll(async () => {
  db = await freshDatabase('unanswered-commit');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  schema = await freshSchema(db.url, 'unanswered');
  const front = await CuttableProxy.inFrontOf(schema.url);
  proxy = front.proxy;
  published = [];
  store = await openPostgresStore(front.url, {
    poolSize: 3,
    connectionTimeoutMs: 500,
    onCommit: (messages) => published.push(messages),
  });
  await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
  await store.createThread({ threadId: 'th_1', parentThreadId: null, title: null, createdBy: 'alice', key: null });
  published.length = 0;
  admin = new pg.Client({ connectionString: schema.url });
  await admin.connect();
});
afterEach(async () => {
  if (!proxy.isOpen) await proxy.open(proxy.port);
  await admin.end();
  await store.close();
  await proxy.cut();
  await schema.drop();
});

const append = (text: string) =>
  store.appendEvents({ threadId: 'th_1', principalId: 'alice', events: [{ type: 'acme.note', data: { text } }] });

/** The notes stored, read straight from the database: [seq, text]. */
async function stored(): Promise<Array<[number, string]>> {
  const { rows } = await admin.query<{ seq: string; data: string }>(
    "SELECT seq, data FROM events WHERE thread_id = 'th_1' AND type = 'acme.note' ORDER BY seq",
  );
  return rows.map((r) => [Number(r.seq), (JSON.parse(r.data) as { text: string }).text]);
}

const publishedSeqs = () => published.flat().flatMap((m) => (m.kind === 'events' ? m.events.map((e) => e.seq) : []));

describe('a COMMIT whose answer is lost', () => {
  it('answers an append that committed as committed: its event is there once, with its seq, and published', async () => {
    const broken = proxy.breakNext({ sent: COMMIT, deliver: true, until: COMMIT });
    const appended = await append('kept');
    await broken;
    expect(appended.events.map((e) => e.seq)).toEqual([2]);
    expect(await stored()).toEqual([[2, 'kept']]);
    expect(publishedSeqs()).toEqual([2]);
    // The writer goes on, on a new connection.
    expect((await append('next')).events[0]!.seq).toBe(3);
    expect(await stored()).toEqual([
      [2, 'kept'],
      [3, 'next'],
    ]);
  });

  it('answers 503 for an append whose COMMIT never reached the database, and leaves nothing of it', async () => {
    const broken = proxy.breakNext({ sent: COMMIT, deliver: false });
    await expect(append('lost')).rejects.toBeInstanceOf(StoreUnavailableError);
    await broken;
    expect(await stored()).toEqual([]);
    expect(publishedSeqs()).toEqual([]);
    expect((await append('next')).events[0]!.seq).toBe(2);
  });

  /** Every event inserted from now on holds its COMMIT until the test's admin lets go of lock 4242. */
  async function holdCommitsBehindLock(): Promise<void> {
    await admin.query(`CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(4242); RETURN NULL; END $$`);
    await admin.query(`CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hold_commit()`);
    await admin.query('SELECT pg_advisory_lock(4242)');
  }

  it('waits for a COMMIT still in progress when its answer was lost, and answers it as committed once it has', async () => {
    await holdCommitsBehindLock();
    const broken = proxy.breakNext({ sent: COMMIT, deliver: true });
    const appended = append('held');
    await broken;
    // The store has lost its connection; the database is still inside that COMMIT.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await stored()).toEqual([]);
    await admin.query('SELECT pg_advisory_unlock(4242)');
    expect((await appended).events.map((e) => e.seq)).toEqual([2]);
    expect(await stored()).toEqual([[2, 'held']]);
    expect(publishedSeqs()).toEqual([2]);
  });

  it('ends the session of a COMMIT still in progress after two seconds, then answers 503: it will never land', async () => {
    await holdCommitsBehindLock();
    const writer = async () =>
      (
        await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = 'bubble-server-writer' AND state = 'active'",
        )
      ).rows.map((r) => r.pid);
    const broken = proxy.breakNext({ sent: COMMIT, deliver: true });
    const appended = append('stuck');
    appended.catch(() => {});
    await broken;
    const [stuck] = await writer();
    expect(stuck).toBeDefined();
    await expect(appended).rejects.toBeInstanceOf(StoreUnavailableError);
    // Its session was ended, so letting the lock go commits nothing.
    expect(await writer()).not.toContain(stuck);
    await admin.query('SELECT pg_advisory_unlock(4242)');
    expect(await stored()).toEqual([]);
    expect(publishedSeqs()).toEqual([]);
    expect((await append('next')).events[0]!.seq).toBe(2);
  });

  it('answers 503, as it may have committed, when the database cannot be asked either', async () => {
    // The proxy goes as the answer is dropped: the store can reach the database no more.
    const broken = proxy.breakNext({ sent: COMMIT, deliver: true, until: COMMIT }).then(() => proxy.cut());
    await expect(append('unknown')).rejects.toBeInstanceOf(StoreUnavailableError);
    await broken;
    expect(await stored()).toEqual([[2, 'unknown']]);
    expect(publishedSeqs()).toEqual([]);
  });
});
