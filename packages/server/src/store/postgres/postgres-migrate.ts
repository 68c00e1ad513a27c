import type pg from 'pg';
import { pendingMigrations } from '../migrations/migration-plan.js';
import { POSTGRES_MIGRATIONS } from './postgres-schema.js';

/** The advisory lock every instance takes to migrate: the first applies, the others wait and find nothing to do. */
const MIGRATION_LOCK_KEY = 7_352_114_000;

/**
 * Applies the pending migrations in one transaction under `pg_advisory_xact_lock`, so instances
 * that start together migrate once and none serves a half-migrated schema. Answers the versions
 * applied now (empty when the schema was already current).
 */
export async function migratePostgres(pool: pg.Pool, now: () => Date = () => new Date()): Promise<number[]> {
  const client = await pool.connect();
  const onError = (): void => {};
  client.on('error', onError);
  let failed: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at text NOT NULL)',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const pending = pendingMigrations(
      POSTGRES_MIGRATIONS,
      rows.map((r) => r.version),
    );
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
        migration.version,
        now().toISOString(),
      ]);
    }
    await client.query('COMMIT');
    return pending.map((m) => m.version);
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      failed = rollbackError;
    });
    throw error;
  } finally {
    client.off('error', onError);
    client.release(failed);
  }
}
