import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashToken } from '../../domain/tokens.js';
import { describeInvitationContract } from '../invitation-contract.js';
import { describeStoreContract, type StoreContractHarness } from '../store-contract.js';
import { openSqliteStore } from './sqlite-store.js';

const harness: StoreContractHarness = {
  newLocation: async () => join(await mkdtemp(join(tmpdir(), 'bubble-store-')), 'bubble.db'),
  open: (location, options) => openSqliteStore(location, options),
  dispose: async (location) => rm(join(location, '..'), { recursive: true, force: true }),
};
describeStoreContract('sqlite', harness);
describeInvitationContract('sqlite', harness);

describe('sqlite migrations', () => {
  it('gives every bot of a version-1 database joinableBy "owners"', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bubble-migrate-'));
    const path = join(dir, 'bubble.db');
    try {
      const first = await openSqliteStore(path);
      await first.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
      await first.createPrincipal({
        principalId: 'old-bot',
        kind: 'bot',
        displayName: null,
        ownerPrincipalIds: ['alice'],
        joinableBy: 'anyone',
      });
      await first.close();
      // Turn the file back into a version-1 database: no joinable_by column, no record of migration 2.
      const raw = new Database(path);
      raw.exec(
        'ALTER TABLE principals DROP COLUMN joinable_by; DROP TABLE oidc_subjects; DROP TABLE invites; DROP TABLE token_revocations; DROP TABLE invitations; DELETE FROM schema_migrations WHERE version >= 2;',
      );
      raw.close();

      const reopened = await openSqliteStore(path);
      expect(await reopened.getPrincipal('old-bot')).toMatchObject({ kind: 'bot', joinableBy: 'owners' });
      expect((await reopened.getPrincipal('alice'))?.joinableBy).toBeUndefined();
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps the revocation log of a version-3 database, seqs included, and lets it hold the end of JWTs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bubble-migrate-'));
    const path = join(dir, 'bubble.db');
    try {
      const first = await openSqliteStore(path);
      await first.createPrincipal(
        { principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] },
        { tokenId: 'tok_new', principalId: 'alice', hash: hashToken('s-1') },
      );
      await first.resolveOidcSubject({
        issuer: 'https://idp.example/',
        subject: 'zoe-sub',
        idCandidates: ['zoe'],
        nameClaim: null,
      });
      await first.close();
      // Turn the file back into a version-3 database: a log whose token_id is NOT NULL, with entries at seqs 5 and 9.
      const raw = new Database(path);
      raw.exec(`
        ALTER TABLE oidc_subjects DROP COLUMN jwts_not_before;
        DROP TABLE token_revocations;
        CREATE TABLE token_revocations (seq INTEGER PRIMARY KEY AUTOINCREMENT, token_id TEXT NOT NULL, principal_id TEXT NOT NULL, revoked_at TEXT NOT NULL);
        INSERT INTO token_revocations (seq, token_id, principal_id, revoked_at) VALUES
          (5, 'tok_a', 'alice', '2026-12-01T10:00:00.000Z'), (9, 'tok_b', 'alice', '2026-12-01T10:00:01.000Z');
        DROP TABLE invitations;
        DELETE FROM schema_migrations WHERE version >= 4;
      `);
      raw.close();

      const reopened = await openSqliteStore(path);
      expect(await reopened.tokenRevocationCursor()).toBe(9);
      expect((await reopened.readTokenRevocationsAfter(0, 10)).map((r) => [r.cursor, r.tokenId])).toEqual([
        [5, 'tok_a'],
        [9, 'tok_b'],
      ]);
      expect(await reopened.revokeAllCredentials('zoe')).toEqual({
        revokedTokenIds: [],
        jwtsIssuedBefore: expect.any(String),
      });
      expect(await reopened.revokeAllCredentials('alice')).toEqual({
        revokedTokenIds: ['tok_new'],
        jwtsIssuedBefore: null,
      });
      const after = await reopened.readTokenRevocationsAfter(9, 10);
      expect(after.map((r) => [r.principalId, r.tokenId])).toEqual([
        ['zoe', null],
        ['alice', 'tok_new'],
      ]);
      expect(after[0]!.cursor).toBeGreaterThan(9);
      expect((await reopened.findOidcSubject('https://idp.example/', 'zoe-sub'))?.jwtsNotBefore).toBe(
        after[0]!.revokedAt,
      );
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
