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

  it("moves the outbox's times to the database's clock on a database that already has entries", async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // A database at version 2, its outbox written by instances' clocks (ISO text).
      await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at text NOT NULL)');
      for (const migration of POSTGRES_MIGRATIONS.filter((m) => m.version <= 2)) {
        await client.query(migration.sql);
        await client.query("INSERT INTO schema_migrations VALUES ($1, '2026-11-01T00:00:00.000Z')", [
          migration.version,
        ]);
      }
      await client.query(
        `INSERT INTO outbox (message, created_at) VALUES ('{"kind":"old"}', '2026-11-30T09:15:00.250Z')`,
      );
      const store = await openPostgresStore(db.url);
      try {
        await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
        await store.createThread({
          threadId: 'th_1',
          parentThreadId: null,
          title: null,
          createdBy: 'alice',
          key: null,
        });
        const [old, ...written] = await store.readOutboxAfter(0, 100);
        expect(old).toEqual({ id: 1, message: { kind: 'old' }, createdAt: '2026-11-30T09:15:00.250Z' });
        expect(written.length).toBeGreaterThan(0);
        for (const entry of written) expect(Math.abs(Date.parse(entry.createdAt) - Date.now())).toBeLessThan(60_000);
      } finally {
        await store.close();
      }
      expect((await appliedVersions()).map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    } finally {
      await client.end();
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
