/**
 * The servers of the scale benchmark: N real `bubble-server serve --database …` processes on one
 * fresh PostgreSQL database (and, for the SQLite baseline, `startBubble` from bench-bubble.ts),
 * each with the bench's humans, created the way the operator CLI does before the servers start.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createHumanPrincipal } from '../services/principal-service.js';
import { openPostgresStore } from '../store/postgres/postgres-store.js';
import { BENCH_HUMANS, type Bubble } from './bench-bubble.js';
import { freePort, startServer, stopProcess } from './bench-processes.js';

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new database on the server of `adminUrl` (which may create databases), dropped by `drop`. */
export async function createBenchDatabase(adminUrl: string, label: string): Promise<BenchDatabase> {
  const name = `bubble_bench_${label}_${randomBytes(4).toString('hex')}`;
  await admin(adminUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** The bench's humans in `databaseUrl` (its schema created on the way); their tokens, in order. */
export async function createPgHumans(databaseUrl: string): Promise<string[]> {
  const store = await openPostgresStore(databaseUrl, { poolSize: 2 });
  const tokens: string[] = [];
  try {
    for (let i = 0; i < BENCH_HUMANS; i += 1) {
      tokens.push((await createHumanPrincipal(store, `bench-${String(i).padStart(2, '0')}`, null)).token.token);
    }
  } finally {
    await store.close();
  }
  return tokens;
}

/** `count` instances on one database, in the order given; each a `Bubble` (limits on: the defaults, as shipped). */
export async function startPgBubbles(
  serverBin: string,
  databaseUrl: string,
  tokens: string[],
  count: number,
): Promise<Bubble[]> {
  const started: Bubble[] = [];
  try {
    for (let i = 0; i < count; i += 1) {
      const port = await freePort();
      const server = await startServer(process.execPath, [
        serverBin,
        'serve',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--database',
        databaseUrl,
        '--log-level',
        'warn',
      ]);
      started.push({ ...server, limits: 'on', token: tokens[0]!, tokens, host: '127.0.0.1', port });
    }
  } catch (error) {
    await stopAll(started);
    throw error;
  }
  return started;
}

export async function stopAll(bubbles: readonly Bubble[]): Promise<void> {
  await Promise.all(bubbles.map((bubble) => stopProcess(bubble.child)));
}
