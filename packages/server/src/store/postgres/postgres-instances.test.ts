import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import { hashToken } from '../../domain/tokens.js';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';

/**
 * Several stores on one database stand for several server instances: each has its own pool and
 * its own group commit, so their transactions interleave as those of separate processes would.
 */
let db: TestDatabase;
let instances: Array<{ store: PostgresStore; published: LiveBusMessage[] }>;

beforeEach(async () => {
  db = await freshDatabase('instances');
  instances = [];
  for (let i = 0; i < 3; i += 1) {
    const published: LiveBusMessage[] = [];
    instances.push({ store: await openPostgresStore(db.url, { onCommit: (m) => published.push(...m) }), published });
  }
});
afterEach(async () => {
  for (const { store } of instances) await store.close();
  await db.drop();
});

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('PostgreSQL store shared by several instances', () => {
  it('keeps every thread gapless when instances append to overlapping threads at once, without deadlocking', async () => {
    const [first] = instances;
    await first!.store.createPrincipal({
      principalId: 'alice',
      kind: 'human',
      displayName: null,
      ownerPrincipalIds: [],
    });
    const threads = ['th_1', 'th_2', 'th_3', 'th_4'];
    for (const threadId of threads) {
      await first!.store.createThread({ threadId, parentThreadId: null, title: null, createdBy: 'alice', key: null });
    }
    for (const { published } of instances) published.length = 0;
    // Each request lands on one instance and thread; each instance's groups mix threads in every order.
    const requests = Array.from({ length: 600 }, (_, i) => ({
      on: instances[i % 3]!.store,
      threadId: threads[(i * 7 + Math.floor(i / 5)) % 4]!,
      events: Array.from({ length: 1 + (i % 3) }, (_, k) => ({ type: 'acme.note', data: { i, k } })),
    }));
    const results = await Promise.all(
      requests.map((r) => r.on.appendEvents({ threadId: r.threadId, principalId: 'alice', events: r.events })),
    );
    for (const threadId of threads) {
      const expected = requests.filter((r) => r.threadId === threadId).reduce((n, r) => n + r.events.length, 0);
      const all = await first!.store.readEventsAfter(threadId, 0, 10_000);
      expect(all.events.map((e) => e.seq)).toEqual(range(1, expected + 1));
      expect(all.headSeq).toBe(expected + 1);
      // Each instance published its own appends to the thread in ascending seq order.
      for (const { published } of instances) {
        const seqs = published
          .flatMap((m) => (m.kind === 'events' && m.threadId === threadId ? m.events : []))
          .map((e) => e.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
    }
    // A request's events are consecutive, and what each request was answered is what was stored.
    for (const [i, result] of results.entries()) {
      const seqs = result.events.map((e) => e.seq);
      expect(seqs).toEqual(range(seqs[0]!, seqs[0]! + requests[i]!.events.length - 1));
    }
  });

  it('commits the outbox in id order across instances: a reader that follows it misses nothing', async () => {
    const [first] = instances;
    await first!.store.createPrincipal({
      principalId: 'alice',
      kind: 'human',
      displayName: null,
      ownerPrincipalIds: [],
    });
    const people = Array.from({ length: 30 }, (_, i) => `p${i}`);
    for (const id of people) {
      await first!.store.createPrincipal({ principalId: id, kind: 'human', displayName: null, ownerPrincipalIds: [] });
      await first!.store.addToken({ tokenId: `tok_${id}`, principalId: id, hash: hashToken(id) });
    }
    const threads = ['th_1', 'th_2', 'th_3'];
    for (const threadId of threads) {
      await first!.store.createThread({ threadId, parentThreadId: null, title: null, createdBy: 'alice', key: null });
    }
    const start = await first!.store.outboxHead();
    const revocationStart = await first!.store.tokenRevocationCursor();
    const seen: number[] = [];
    const revocationsSeen: number[] = [];
    let writing = true;
    // Follows both logs the way a watcher does: from the last id read, never looking back.
    const follow = (async () => {
      let cursor = start;
      let revocationCursor = revocationStart;
      while (writing || cursor < (await first!.store.outboxHead())) {
        const page = await first!.store.readOutboxAfter(cursor, 7);
        for (const entry of page) seen.push(entry.id);
        cursor = page[page.length - 1]?.id ?? cursor;
        const revocations = await first!.store.readTokenRevocationsAfter(revocationCursor, 5);
        for (const r of revocations) revocationsSeen.push(r.cursor);
        revocationCursor = revocations[revocations.length - 1]?.cursor ?? revocationCursor;
      }
      for (;;) {
        const revocations = await first!.store.readTokenRevocationsAfter(revocationCursor, 100);
        if (revocations.length === 0) break;
        for (const r of revocations) revocationsSeen.push(r.cursor);
        revocationCursor = revocations[revocations.length - 1]!.cursor;
      }
    })();
    await Promise.all(
      people.map((id, i) =>
        Promise.all([
          instances[i % 3]!.store.putGrant({
            threadId: threads[i % 3]!,
            principalId: id,
            role: 'member',
            by: 'alice',
            mayChangeRole: false,
          }),
          instances[(i + 1) % 3]!.store.revokeTokens(id, `tok_${id}`),
        ]),
      ),
    );
    writing = false;
    await follow;
    const all = (await first!.store.readOutboxAfter(start, 1_000)).map((e) => e.id);
    expect(all).toHaveLength(60); // a grant and a tokens_revoked per person
    expect(seen).toEqual(all);
    const allRevocations = (await first!.store.readTokenRevocationsAfter(revocationStart, 1_000)).map((r) => r.cursor);
    expect(allRevocations).toHaveLength(30);
    expect(revocationsSeen).toEqual(allRevocations);
  });

  it('resolves races between instances on the same subject, key or invite through the unique indexes and row locks', async () => {
    const [a, b, c] = instances.map((i) => i.store);
    await a!.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
    const signIns = await Promise.all(
      [a, b, c, a, b, c].map((s) =>
        s!.resolveOidcSubject({
          issuer: 'https://idp',
          subject: 'bob-sub',
          idCandidates: ['bob', 'bob-2'],
          nameClaim: 'Bob',
        }),
      ),
    );
    expect(new Set(signIns.map((r) => r.principal.principalId))).toEqual(new Set(['bob']));
    expect(signIns.filter((r) => r.created)).toHaveLength(1);

    const keyed = await Promise.all(
      [a, b, c].map((s, i) =>
        s!.createThread({ threadId: `th_key_${i}`, parentThreadId: null, title: null, createdBy: 'alice', key: 'k' }),
      ),
    );
    expect(new Set(keyed.map((r) => r.thread.threadId)).size).toBe(1);
    expect(keyed.filter((r) => r.created)).toHaveLength(1);

    const threadId = keyed[0]!.thread.threadId;
    await a!.createInvite({
      inviteId: 'inv_race',
      threadId,
      role: 'member',
      createdBy: 'alice',
      hash: hashToken('race'),
      expiresAt: '2999-01-01T00:00:00.000Z',
      maxUses: 3,
    });
    const people = Array.from({ length: 12 }, (_, i) => `q${i}`);
    for (const id of people)
      await a!.createPrincipal({ principalId: id, kind: 'human', displayName: null, ownerPrincipalIds: [] });
    const accepted = await Promise.allSettled(
      people.map((id, i) => instances[i % 3]!.store.acceptInvite({ hash: hashToken('race'), principalId: id })),
    );
    expect(accepted.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(await a!.listLiveGrantsOnThread(threadId)).toHaveLength(4);
    expect((await a!.readEventsAfter(threadId, 0, 100)).events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });
});
