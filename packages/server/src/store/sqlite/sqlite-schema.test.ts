import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchemaTooNewError } from '../migrations/migration-plan.js';
import { prepareDatabase, SCHEMA_VERSION, SQLITE_MIGRATIONS } from './sqlite-schema.js';
import { openSqliteStore } from './sqlite-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-schema-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('SQLite schema on the numbered migrations', () => {
  it('applies every version to a new file once, and nothing to a current one', () => {
    const db = new Database(join(dir, 'bubble.db'));
    try {
      expect(prepareDatabase(db)).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
      expect(SCHEMA_VERSION).toBe(SQLITE_MIGRATIONS.length);
      expect(prepareDatabase(db)).toEqual([]);
      // A second handle on the same file (another process) finds it current too.
      const other = new Database(join(dir, 'bubble.db'));
      expect(prepareDatabase(other)).toEqual([]);
      other.close();
    } finally {
      db.close();
    }
  });

  it('refuses a file a newer server has migrated', async () => {
    const path = join(dir, 'bubble.db');
    const db = new Database(path);
    prepareDatabase(db);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
      SCHEMA_VERSION + 1,
      new Date().toISOString(),
    );
    db.close();
    await expect(openSqliteStore(path)).rejects.toBeInstanceOf(SchemaTooNewError);
  });
});
