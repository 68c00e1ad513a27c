import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreContract } from '../store-contract.js';
import { openSqliteStore } from './sqlite-store.js';

describeStoreContract('sqlite', {
  newLocation: async () => join(await mkdtemp(join(tmpdir(), 'bubble-store-')), 'bubble.db'),
  open: (location, options) => openSqliteStore(location, options),
  dispose: async (location) => rm(join(location, '..'), { recursive: true, force: true }),
});

describe('sqlite migrations', () => {
  it('gives every bot of a version-1 database joinableBy "owners"', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bubble-migrate-'));
    const path = join(dir, 'bubble.db');
    try {
      const first = await openSqliteStore(path);
      await first.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
      await first.createPrincipal({ principalId: 'old-bot', kind: 'bot', displayName: null, ownerPrincipalIds: ['alice'], joinableBy: 'anyone' });
      await first.close();
      // Turn the file back into a version-1 database: no joinable_by column, no record of migration 2.
      const raw = new Database(path);
      raw.exec("ALTER TABLE principals DROP COLUMN joinable_by; DROP TABLE oidc_subjects; DROP TABLE invites; DROP TABLE token_revocations; DELETE FROM schema_migrations WHERE version >= 2;");
      raw.close();

      const reopened = await openSqliteStore(path);
      expect(await reopened.getPrincipal('old-bot')).toMatchObject({ kind: 'bot', joinableBy: 'owners' });
      expect((await reopened.getPrincipal('alice'))?.joinableBy).toBeUndefined();
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
