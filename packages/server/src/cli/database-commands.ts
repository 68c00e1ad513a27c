import { createReadStream, createWriteStream, fchmodSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { DATABASE_FILE_NAME } from '../create-bubble-server.js';
import { latestVersion } from '../store/migrations/migration-plan.js';
import { migratePostgres } from '../store/postgres/postgres-migrate.js';
import { createPool } from '../store/postgres/postgres-pool.js';
import { POSTGRES_MIGRATIONS } from '../store/postgres/postgres-schema.js';
import { openPostgresStore } from '../store/postgres/postgres-store.js';
import { prepareDatabase, SCHEMA_VERSION } from '../store/sqlite/sqlite-schema.js';
import { makePrivateDir, openPrivateDatabase } from '../store/sqlite/private-files.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { BubbleStore } from '../store/store.js';
import { openPostgresBackend, openSqliteBackend, type DumpBackend } from './dump/dump-backend.js';
import { exportDump, importDump, type RowCounts } from './dump/export-import.js';

/** Where a command's data is: `--data DIR` (SQLite, default ./data) or `--database URL` (PostgreSQL). */
export type Storage = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; url: string };

export function storageOf(flags: { data?: string | undefined; database?: string | undefined }): Storage {
  return flags.database !== undefined
    ? { kind: 'postgres', url: flags.database }
    : { kind: 'sqlite', dataDir: resolve(flags.data ?? './data') };
}

/** The connection string as it may be printed or logged: without its password. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

/** A store for one operator command (the server may be running on the same database). */
export async function openOperatorStore(storage: Storage): Promise<BubbleStore> {
  if (storage.kind === 'postgres') return openPostgresStore(storage.url, { poolSize: 2 });
  makePrivateDir(storage.dataDir);
  return openSqliteStore(join(storage.dataDir, DATABASE_FILE_NAME));
}

/** `migrate`: applies what the schema lacks; answers the versions applied now and the version it is at. */
export async function migrateCommand(storage: Storage): Promise<{ applied: number[]; version: number }> {
  if (storage.kind === 'postgres') {
    const pool = createPool(storage.url, { poolSize: 2 });
    try {
      return { applied: await migratePostgres(pool), version: latestVersion(POSTGRES_MIGRATIONS) };
    } finally {
      await pool.end();
    }
  }
  makePrivateDir(storage.dataDir);
  const db = openPrivateDatabase(join(storage.dataDir, DATABASE_FILE_NAME));
  try {
    return { applied: prepareDatabase(db), version: SCHEMA_VERSION };
  } finally {
    db.close();
  }
}

const openBackend = (storage: Storage): Promise<DumpBackend> =>
  storage.kind === 'postgres' ? openPostgresBackend(storage.url) : Promise.resolve(openSqliteBackend(storage.dataDir));

/** `export`: the dump to `file` (answering its row counts) or to `stdout` (answering nothing: stdout is the dump). */
export async function exportCommand(
  storage: Storage,
  file: string | undefined,
  stdout: Writable,
): Promise<{ exported: RowCounts } | undefined> {
  const backend = await openBackend(storage);
  try {
    if (file === undefined) {
      await exportDump(backend, stdout);
      return undefined;
    }
    // The dump holds every token's hash: 0600, also when it overwrites an older file.
    const fd = openSync(file, 'w', 0o600);
    fchmodSync(fd, 0o600);
    const out = createWriteStream(file, { fd });
    const exported = await exportDump(backend, out);
    out.end();
    await finished(out);
    return { exported };
  } finally {
    await backend.close();
  }
}

/** `import`: a dump from `file` or `stdin` into an empty database. */
export async function importCommand(
  storage: Storage,
  file: string | undefined,
  stdin: Readable,
): Promise<{ imported: RowCounts }> {
  const backend = await openBackend(storage);
  try {
    return { imported: await importDump(backend, file === undefined ? stdin : createReadStream(file)) };
  } finally {
    await backend.close();
  }
}
