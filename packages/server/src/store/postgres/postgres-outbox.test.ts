import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, freshSchema, type TestDatabase } from '../../../test/support/test-postgres.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';

/**
 * The outbox's pruning and what a reader that fell behind it re-checks instead, on the real
 * PostgreSQL store. The store's clock is the test's: entries are written at one time, and pruned
 * as if minutes had passed.
 */
let db: TestDatabase;
let schema: TestDatabase;
let store: PostgresStore;
let clock: number;
const MINUTE = 60_000;

beforeAll(async () => {
  db = await freshDatabase('outbox');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  schema = await freshSchema(db.url, 'outbox');
  clock = Date.parse('2026-12-01T10:00:00.000Z');
  store = await openPostgresStore(schema.url, { poolSize: 3, now: () => new Date(clock) });
  await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
});
afterEach(async () => {
  await store.close();
  await schema.drop();
});

let tokens = 0;
/** A principal with a token, and its revocation: two outbox entries (the revocation's is a `tokens_revoked`). */
async function revokedToken(principalId: string, on: PostgresStore = store): Promise<void> {
  tokens += 1;
  const tokenId = `tok_${tokens}`;
  await on.createPrincipal(
    { principalId, kind: 'human', displayName: null, ownerPrincipalIds: [] },
    { tokenId, principalId, hash: Buffer.alloc(32, tokens) },
  );
  await on.revokeTokens(principalId, tokenId);
}

async function ids(): Promise<number[]> {
  const entries = await store.readOutboxAfter(0, 10_000);
  return entries.map((e) => e.id);
}

describe('pruning the PostgreSQL outbox', () => {
  it('deletes entries older than the window, a batch at a time, oldest first, never the newest', async () => {
    for (let i = 0; i < 5; i += 1) await revokedToken(`old${i}`);
    const written = await ids();
    expect(written.length).toBeGreaterThanOrEqual(5);
    clock += 11 * MINUTE;
    await revokedToken('young');
    const young = (await ids()).filter((id) => !written.includes(id));

    expect(await store.pruneOutbox(10 * MINUTE, 2)).toBe(2);
    expect(await ids()).toEqual([...written.slice(2), ...young]);
    expect(await store.outboxTail()).toBe(written[2]);
    while ((await store.pruneOutbox(10 * MINUTE, 2)) > 0);
    expect(await ids()).toEqual(young);
    expect(await store.outboxTail()).toBe(young[0]);

    // Everything old: all but the newest go, so the head stays where it was.
    clock += 11 * MINUTE;
    const head = await store.outboxHead();
    expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBe(young.length - 1);
    expect(await ids()).toEqual([head]);
    expect(await store.outboxHead()).toBe(head);
    expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBe(0);
  });

  it('deletes only a prefix in id order: an old entry behind a young one stays', async () => {
    await revokedToken('first');
    const [first] = await ids();
    // A writer whose clock is behind: its entry is younger by id, older by time.
    const behind = await openPostgresStore(schema.url, { poolSize: 2, now: () => new Date(clock - 20 * MINUTE) });
    try {
      await revokedToken('second');
      await revokedToken('third', behind);
    } finally {
      await behind.close();
    }
    await revokedToken('fourth');
    const all = await ids();
    expect(all).toHaveLength(4);
    clock += 5 * MINUTE;
    // Only the other writer's entries are older than 10 minutes, and they come after younger ones.
    expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBe(0);
    expect(await ids()).toEqual(all);
    expect(await store.outboxTail()).toBe(first);
  });

  it('skips a turn while another instance prunes', async () => {
    for (let i = 0; i < 3; i += 1) await revokedToken(`p${i}`);
    clock += 11 * MINUTE;
    const other = new pg.Client({ connectionString: schema.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      // The lock the pruning statement takes if it is free (`postgres-outbox.ts`).
      await other.query('SELECT pg_advisory_xact_lock(7352114002)');
      expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBe(0);
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBeGreaterThan(0);
  });
});

describe('what the tables say changed, for a reader that fell behind the pruning', () => {
  it('rebuilds revoked tokens, ended JWTs and grant changes since a time, oldest first', async () => {
    await store.createPrincipal(
      { principalId: 'bob', kind: 'human', displayName: null, ownerPrincipalIds: [] },
      { tokenId: 'tok_bob1', principalId: 'bob', hash: Buffer.alloc(32, 101) },
    );
    await store.addToken({ tokenId: 'tok_bob2', principalId: 'bob', hash: Buffer.alloc(32, 102) });
    await store.addToken({ tokenId: 'tok_bob3', principalId: 'bob', hash: Buffer.alloc(32, 103) });
    await store.createThread({ threadId: 'th_1', parentThreadId: null, title: null, createdBy: 'alice', key: null });
    await store.putGrant({ threadId: 'th_1', principalId: 'bob', role: 'member', by: 'alice', mayChangeRole: false });
    // Before the reader's time: not rebuilt.
    await store.revokeTokens('bob', 'tok_bob1');
    clock += MINUTE;
    const since = new Date(clock).toISOString();
    clock += 1_000;
    await store.revokeTokens('bob', 'tok_bob2');
    clock += 1_000;
    const { principal: olga } = await store.resolveOidcSubject({
      issuer: 'https://idp.example',
      subject: 'olga-1',
      idCandidates: ['olga'],
      nameClaim: null,
    });
    await store.revokeAllCredentials(olga.principalId);
    clock += 1_000;
    await store.revokeGrant({ threadId: 'th_1', principalId: 'bob', by: 'alice' });
    clock += 1_000;
    await store.createThread({ threadId: 'th_2', parentThreadId: null, title: null, createdBy: 'alice', key: null });
    clock += 1_000;
    await store.revokeTokens('bob', 'tok_bob3');

    const at = (seconds: number) => new Date(Date.parse(since) + seconds * 1_000).toISOString();
    const bobsGrant = { threadId: 'th_1', principalId: 'bob', role: 'member', grantedBy: 'alice' };
    expect(await store.recentChanges(since)).toEqual([
      { kind: 'jwts_revoked', principalId: 'olga', issuedBefore: at(2) },
      { kind: 'grant', change: 'revoked', grant: expect.objectContaining({ ...bobsGrant, revokedAt: at(3) }) },
      {
        kind: 'grant',
        change: 'added',
        grant: expect.objectContaining({ threadId: 'th_2', principalId: 'alice', role: 'owner', revokedAt: null }),
      },
      // One message per principal, at its latest revocation.
      { kind: 'tokens_revoked', principalId: 'bob', tokenIds: ['tok_bob2', 'tok_bob3'] },
    ]);
  });
});
