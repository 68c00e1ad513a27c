import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import { DATABASE_FILE_NAME } from '../../create-bubble-server.js';
import { POOL_APPLICATION_NAME } from '../../store/postgres/postgres-pool.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { openPostgresBackend, openSqliteBackend, type DumpBackend } from './dump-backend.js';
import { DumpError, exportDump, importDump } from './export-import.js';

let dir: string;
let pgDb: TestDatabase;
let admin: pg.Client;
const backends: DumpBackend[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-import-'));
  pgDb = await freshDatabase('import');
  admin = new pg.Client({ connectionString: pgDb.url, application_name: 'import-test-admin' });
  await admin.connect();
});
afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
  await admin.end();
  await pgDb.drop();
  await rm(dir, { recursive: true, force: true });
});

const openTarget = async (): Promise<DumpBackend> => {
  const backend = await openPostgresBackend(pgDb.url);
  backends.push(backend);
  return backend;
};

/** The lines of a dump of a SQLite database holding the given humans. */
async function dumpOf(name: string, principalIds: string[]): Promise<string[]> {
  const dataDir = join(dir, name);
  await mkdir(dataDir, { recursive: true });
  const store = await openSqliteStore(join(dataDir, DATABASE_FILE_NAME));
  for (const principalId of principalIds) {
    await store.createPrincipal({ principalId, kind: 'human', displayName: null, ownerPrincipalIds: [] });
  }
  await store.close();
  const backend = openSqliteBackend(dataDir);
  let text = '';
  const out = new Writable({
    write: (chunk, _encoding, done) => {
      text += chunk;
      done();
    },
  });
  await exportDump(backend, out);
  await backend.close();
  return text.trimEnd().split('\n');
}

/**
 * The imports' backends in `pg_stat_activity` with their transaction open (and, with `idle`, waiting
 * on the client for a while: not in the instant between two of its queries), once there are `count`.
 */
async function importBackends(count: number, idle = false): Promise<number[]> {
  for (;;) {
    const { rows } = await admin.query(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1 AND xact_start IS NOT NULL
          AND (NOT $2 OR (state = 'idle in transaction' AND clock_timestamp() - state_change > interval '100 ms'))`,
      [POOL_APPLICATION_NAME, idle],
    );
    if (rows.length === count) return rows.map((r) => r.pid as number);
    await sleep(20);
  }
}

const principalIds = async () =>
  (await admin.query('SELECT principal_id FROM principals ORDER BY principal_id')).rows.map((r) => r.principal_id);

describe('importDump into PostgreSQL', () => {
  it('fails, without crashing the process, when its connection is killed while it waits on its input', async () => {
    const lines = await dumpOf('a', ['alice']);
    const target = await openTarget();
    const input = new PassThrough();
    input.write(`${lines[0]}\n`);
    const imported = importDump(target, input);
    imported.catch(() => {});
    const [pid] = await importBackends(1, true);
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    // Long enough for the client to read the termination while no query of its own is running.
    await sleep(300);
    input.end(`${lines.slice(1).join('\n')}\n`);
    await expect(imported).rejects.toThrow('terminating connection due to administrator command');
    expect(await principalIds()).toEqual([]);
  });

  it('of two imports started together into one new database, lands one and refuses the other as not empty', async () => {
    const dumps = [await dumpOf('a', ['alice', 'anne']), await dumpOf('b', ['bob'])];
    const targets = [await openTarget(), await openTarget()];
    const inputs = dumps.map((lines) => {
      const input = new PassThrough();
      input.write(`${lines[0]}\n`);
      return input;
    });
    const imports = targets.map((target, i) => importDump(target, inputs[i]!));
    for (const running of imports) running.catch(() => {});
    // Both have begun before either has read a row.
    await importBackends(2);
    for (const [i, input] of inputs.entries()) input.end(`${dumps[i]!.slice(1).join('\n')}\n`);
    const outcomes = await Promise.allSettled(imports);
    const landed = outcomes.findIndex((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
    expect(landed).not.toBe(-1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(DumpError);
    expect((refused[0] as Error).message).toContain('the target postgres database is not empty');
    expect(await principalIds()).toEqual(landed === 0 ? ['alice', 'anne'] : ['bob']);
  });
});

describe('importDump into SQLite', () => {
  it('checks the target is empty inside its write transaction: lands a dump once, then refuses it', async () => {
    const lines = await dumpOf('a', ['alice']);
    const target = openSqliteBackend(join(dir, 'target'));
    backends.push(target);
    const dump = `${lines.join('\n')}\n`;
    expect(await importDump(target, PassThrough.from([dump]))).toMatchObject({ principals: 1 });
    const again = importDump(target, PassThrough.from([dump]));
    await expect(again).rejects.toBeInstanceOf(DumpError);
    await expect(again).rejects.toThrow('the target sqlite database is not empty');
  });
});
