/**
 * A database that answers nothing: the server's statement timeout cannot help (the server is
 * not there to send the cancel), so without a client-side timeout the request would wait for
 * ever. Here one PostgreSQL backend, the one serving the pool's connection or the group-commit
 * writer's, is stopped with SIGSTOP (and always continued afterwards): the request on it is
 * answered 503 once the query timeout passes, its connection is closed rather than given back,
 * and the next request, on a new connection, succeeds.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import { createBubbleServer, type BubbleServer } from '../../create-bubble-server.js';
import { createHumanPrincipal } from '../../services/principal-service.js';
import { client, type TestClient } from '../../testing/test-client.js';
import { POOL_APPLICATION_NAME, queryTimeoutMs, WRITER_APPLICATION_NAME } from './postgres-pool.js';

const STATEMENT_TIMEOUT_MS = 500;
const QUERY_TIMEOUT_MS = queryTimeoutMs(STATEMENT_TIMEOUT_MS);
const QUIET = 600_000;

let db: TestDatabase;
let admin: pg.Client;
let server: BubbleServer;
let alice: TestClient;
let threadId: string;

beforeAll(async () => {
  db = await freshDatabase('query-timeout');
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  server = await createBubbleServer({
    database: db.url,
    port: 0,
    // One pooled connection for reads, one for the writer: the test knows which backend a request meets.
    postgres: { poolSize: 2, statementTimeoutMs: STATEMENT_TIMEOUT_MS },
    // Nothing in the background uses those connections while the test runs.
    cluster: {
      outboxPollMs: QUIET,
      headsRecheckMs: QUIET,
      presenceHeartbeatMs: QUIET,
      presenceResyncMs: QUIET,
      outboxRetentionMs: QUIET,
    },
  });
  const { token } = await createHumanPrincipal(server.store, 'alice', null);
  alice = client(server.url, token.token);
  const created = await alice.post('/v1/threads', {});
  expect(created.status).toBe(201);
  threadId = created.body.thread.threadId;
});

/** Backends stopped and not yet continued: continued after each test, even one that timed out. */
const stopped = new Set<number>();
const resume = (pid: number): void => {
  if (stopped.delete(pid)) process.kill(pid, 'SIGCONT');
};
afterEach(() => {
  for (const pid of [...stopped]) resume(pid);
});

afterAll(async () => {
  await server?.close();
  await admin?.end();
  await db?.drop();
});

/** The one backend of this database with that application name. */
async function backendOf(applicationName: string): Promise<number> {
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
    [applicationName],
  );
  expect(rows).toHaveLength(1);
  return rows[0]!.pid;
}

/** Waits for a backend to exit: its connection was closed (it notices once it runs again). */
async function exited(pid: number): Promise<void> {
  for (const deadline = Date.now() + 5_000; ; ) {
    const { rows } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (rows.length === 0) return;
    if (Date.now() > deadline) throw new Error(`backend ${pid} is still there: its connection was kept`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs `during` with only that backend stopped; it is continued whatever happens. */
async function whileStopped<T>(pid: number, during: () => Promise<T>): Promise<T> {
  stopped.add(pid);
  process.kill(pid, 'SIGSTOP');
  try {
    return await during();
  } finally {
    resume(pid);
  }
}

async function timed<T>(request: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const startedAt = performance.now();
  const result = await request();
  return { result, ms: performance.now() - startedAt };
}

describe('a PostgreSQL backend that answers nothing', () => {
  it('derives the client timeout from the statement timeout, and keeps one when there is none', () => {
    expect(queryTimeoutMs(30_000)).toBe(45_000);
    expect(QUERY_TIMEOUT_MS).toBe(1_500);
    expect(queryTimeoutMs(0)).toBe(300_000);
  });

  it('a read on its pooled connection is answered 503 after the query timeout; the next read succeeds', async () => {
    expect((await alice.get(`/v1/threads/${threadId}`)).status).toBe(200);
    const pid = await backendOf(POOL_APPLICATION_NAME);
    const stuck = await whileStopped(pid, async () => {
      const { result, ms } = await timed(() => alice.get(`/v1/threads/${threadId}`));
      // Not given back to the pool: the next read opens a new connection, and it answers.
      const next = await alice.get(`/v1/threads/${threadId}`);
      return { result, ms, next };
    });
    expect(stuck.result.status).toBe(503);
    expect(stuck.result.headers['retry-after']).toBe('1');
    expect(stuck.ms).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 50);
    expect(stuck.ms).toBeLessThan(QUERY_TIMEOUT_MS + 3_000);
    expect(stuck.next.status).toBe(200);
    await exited(pid);
    expect(await backendOf(POOL_APPLICATION_NAME)).not.toBe(pid);
  });

  it('a write on the group-commit writer is answered 503 after the query timeout; the next write commits', async () => {
    const append = (n: number) => alice.post(`/v1/threads/${threadId}/events`, { type: 'acme.n', data: { n } });
    expect((await append(1)).status).toBe(201);
    const pid = await backendOf(WRITER_APPLICATION_NAME);
    const stuck = await whileStopped(pid, async () => {
      const { result, ms } = await timed(() => append(2));
      const next = await append(3);
      return { result, ms, next };
    });
    expect(stuck.result.status).toBe(503);
    expect(stuck.ms).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 50);
    expect(stuck.ms).toBeLessThan(QUERY_TIMEOUT_MS + 3_000);
    expect(stuck.next.status).toBe(201);
    await exited(pid);
    expect(await backendOf(WRITER_APPLICATION_NAME)).not.toBe(pid);
    // The refused write never committed; the one after it did, right behind the first.
    const events = await alice.get(`/v1/threads/${threadId}/events?after=0`);
    expect(events.status).toBe(200);
    expect(
      events.body.events.filter((e: { type: string }) => e.type === 'acme.n').map((e: { data: unknown }) => e.data),
    ).toEqual([{ n: 1 }, { n: 3 }]);
  });
});
