import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import { SchemaTooNewError } from '../migrations/migration-plan.js';
import { migratePostgres } from './postgres-migrate.js';
import { createPool } from './postgres-pool.js';
import { POSTGRES_MIGRATIONS } from './postgres-schema.js';
import { openPostgresStore } from './postgres-store.js';

let db: TestDatabase;
beforeEach(async () => {
  db = await freshDatabase('migrate');
});
afterEach(async () => {
  await db.drop();
});

async function appliedVersions(): Promise<Array<{ version: number }>> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows;
  } finally {
    await client.end();
  }
}

describe('PostgreSQL migrations', () => {
  it('migrates a fresh database once when several instances start on it together', async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore(db.url)));
    try {
      expect(await appliedVersions()).toEqual(POSTGRES_MIGRATIONS.map((m) => ({ version: m.version })));
      // Every instance works on the one schema.
      await stores[0]!.createPrincipal({
        principalId: 'alice',
        kind: 'human',
        displayName: null,
        ownerPrincipalIds: [],
      });
      for (const store of stores) expect((await store.listPrincipals()).map((p) => p.principalId)).toEqual(['alice']);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it('applies nothing to a database that is current, and says which versions it applied', async () => {
    const pool = createPool(db.url);
    try {
      expect(await migratePostgres(pool)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
      expect(await migratePostgres(pool)).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('refuses a database a newer server has migrated', async () => {
    const pool = createPool(db.url);
    try {
      await migratePostgres(pool);
      await pool.query("INSERT INTO schema_migrations (version, applied_at) VALUES (99, '2027-01-01T00:00:00.000Z')");
    } finally {
      await pool.end();
    }
    await expect(openPostgresStore(db.url)).rejects.toBeInstanceOf(SchemaTooNewError);
  });
});
