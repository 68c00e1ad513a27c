import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, freshSchema, type TestDatabase } from '../../../test/support/test-postgres.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';

/**
 * The outbox's pruning and what a reader that fell behind it re-checks instead, on the real
 * PostgreSQL store. Entries are stamped by the database's clock, so the tests age them in the
 * table to prune them as if minutes had passed. The store's own clock is the test's: it stamps
 * the tables' times that `recentChanges` reads, and has no say in pruning.
 */
let db: TestDatabase;
let schema: TestDatabase;
let store: PostgresStore;
let admin: pg.Client;
let clock: number;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

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
  admin = new pg.Client({ connectionString: schema.url });
  await admin.connect();
});
afterEach(async () => {
  await admin.end();
  await store.close();
  await schema.drop();
});

/** Makes the entries there now (or those of `only`) older by that many minutes, as if that much time had passed. */
async function age(minutes: number, only?: number[]): Promise<void> {
  await admin.query(
    `UPDATE outbox SET created_at = created_at - $1::float8 * interval '1 minute' WHERE $2::bigint[] IS NULL OR id = ANY($2)`,
    [minutes, only ?? null],
  );
}

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
    await age(11);
    await revokedToken('young');
    const young = (await ids()).filter((id) => !written.includes(id));

    expect(await store.pruneOutbox(10 * MINUTE, 2)).toBe(2);
    expect(await ids()).toEqual([...written.slice(2), ...young]);
    expect(await store.outboxTail()).toBe(written[2]);
    while ((await store.pruneOutbox(10 * MINUTE, 2)) > 0);
    expect(await ids()).toEqual(young);
    expect(await store.outboxTail()).toBe(young[0]);

    // Everything old: all but the newest go, so the head stays where it was.
    await age(11);
    const head = await store.outboxHead();
    expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBe(young.length - 1);
    expect(await ids()).toEqual([head]);
    expect(await store.outboxHead()).toBe(head);
    expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBe(0);
  });

  it('deletes only a prefix in id order: an old entry behind a young one stays', async () => {
    await revokedToken('first');
    const [first] = await ids();
    await revokedToken('second');
    const before = await ids();
    await revokedToken('third');
    // Younger by id, older by time (as a transaction that began first and took the log lock last).
    const third = (await ids()).filter((id) => !before.includes(id));
    await revokedToken('fourth');
    const all = await ids();
    await age(20, third);
    // Only the third's entries are older than 10 minutes, and they come after younger ones.
    expect(await store.pruneOutbox(10 * MINUTE, 1_000)).toBe(0);
    expect(await ids()).toEqual(all);
    expect(await store.outboxTail()).toBe(first);
  });

  it('skips a turn while another instance prunes', async () => {
    for (let i = 0; i < 3; i += 1) await revokedToken(`p${i}`);
    await age(11);
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

describe('the outbox by the database clock, for instances whose own clocks are far apart', () => {
  it('stamps entries by the database, and prunes by it whatever the pruning instance says the time is', async () => {
    const ahead = await openPostgresStore(schema.url, { poolSize: 2, now: () => new Date(Date.now() + HOUR) });
    const behind = await openPostgresStore(schema.url, { poolSize: 2, now: () => new Date(Date.now() - HOUR) });
    try {
      await revokedToken('mine');
      await revokedToken('ahead', ahead);
      await revokedToken('behind', behind);
      const entries = await store.readOutboxAfter(0, 100);
      // Not the writers' clocks (this store's says 2026-12-01T10:00, the others an hour either side of now).
      for (const { createdAt } of entries) expect(Math.abs(Date.parse(createdAt) - Date.now())).toBeLessThan(MINUTE);
      // Nothing is ten minutes old yet: an instance an hour ahead prunes none of it.
      expect(await ahead.pruneOutbox(10 * MINUTE, 1_000)).toBe(0);
      expect(await ids()).toEqual(entries.map((e) => e.id));
      // Eleven minutes on, it all is: one an hour behind prunes it, all but the newest.
      await age(11);
      expect(await behind.pruneOutbox(10 * MINUTE, 1_000)).toBe(entries.length - 1);
      expect(await ids()).toEqual([entries.at(-1)!.id]);
    } finally {
      await ahead.close();
      await behind.close();
    }
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
