import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import type { BubbleError } from '../../errors/bubble-error.js';
import { hashToken } from '../../domain/tokens.js';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { CLUSTER_CHANNEL, type ClusterHint } from '../cluster-feed.js';
import { clusterHintPayload } from './postgres-group-sql.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';

let db: TestDatabase;
let store: PostgresStore;
let listener: pg.Client;
let hints: ClusterHint[];
let published: LiveBusMessage[][];

/** Notifications arrive on their own connection: wait until `count` have, or a while past it. */
async function settledHints(count: number): Promise<ClusterHint[]> {
  for (let i = 0; i < 100 && hints.length < count; i += 1) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
  return hints;
}

const note = (text: string) => ({ type: 'acme.note', data: { text } });

async function twoThreads() {
  await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
  await store.createPrincipal({ principalId: 'bob', kind: 'human', displayName: null, ownerPrincipalIds: [] });
  const make = async (threadId: string) =>
    (await store.createThread({ threadId, parentThreadId: null, title: null, createdBy: 'alice', key: null })).thread;
  const threads = [await make('th_a'), await make('th_b')];
  await settledHints(2);
  hints.length = 0;
  published.length = 0;
  return threads;
}

describe('PostgreSQL group commit', () => {
  beforeEach(async () => {
    db = await freshDatabase('group_commit');
    published = [];
    store = await openPostgresStore(db.url, { onCommit: (m) => published.push(m) });
    hints = [];
    listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (n) => hints.push(JSON.parse(n.payload!) as ClusterHint));
    await listener.query(`LISTEN ${CLUSTER_CHANNEL}`);
  });
  afterEach(async () => {
    await listener.end();
    await store.close();
    await db.drop();
  });

  it('commits the writes of one turn in one transaction, sending one notification with every new head and the outbox id', async () => {
    await twoThreads();
    await Promise.all([
      store.appendEvents({ threadId: 'th_a', principalId: 'alice', events: [note('1'), note('2')] }),
      store.appendEvents({ threadId: 'th_b', principalId: 'alice', events: [note('3')] }),
      store.putGrant({ threadId: 'th_a', principalId: 'bob', role: 'member', by: 'alice', mayChangeRole: false }),
    ]);
    const [hint, ...more] = await settledHints(1);
    expect(more).toEqual([]);
    const outbox = await store.readOutboxAfter(0, 100);
    expect(hint).toEqual({
      heads: [
        { threadId: 'th_a', headSeq: 4 },
        { threadId: 'th_b', headSeq: 2 },
      ],
      outbox: outbox[outbox.length - 1]!.id,
    });
    // One group, published once, in job order; its one non-event message is the outbox's newest entry.
    expect(published).toHaveLength(1);
    const grant = published[0]!.find((m) => m.kind === 'grant');
    expect(outbox[outbox.length - 1]!.message).toEqual(grant);
    expect(JSON.stringify(outbox[outbox.length - 1]!.message)).toBe(JSON.stringify(grant));
    expect(await store.outboxHead()).toBe(hint!.outbox);
    expect(await store.threadHeads(['th_a', 'th_b', 'th_missing'])).toEqual(
      new Map([
        ['th_a', 4],
        ['th_b', 2],
      ]),
    );
  });

  it('drops a job refused before it writes from its group, and commits the rest in the same transaction', async () => {
    await twoThreads();
    const results = await Promise.allSettled([
      store.appendEvents({ threadId: 'th_a', principalId: 'alice', events: [note('ok-1')] }),
      store.appendEvents({ threadId: 'th_a', principalId: 'bob', events: [note('no grant')] }),
      store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] }),
      store.appendEvents({ threadId: 'th_b', principalId: 'alice', events: [note('ok-2')] }),
      store.appendEvents({
        threadId: 'th_a',
        principalId: 'alice',
        events: [
          note('lost with its batch'),
          { type: 'run_started', data: { runId: 'r9' } },
          { type: 'run_started', data: { runId: 'r9' } },
        ],
      }),
      store.appendEvents({ threadId: 'th_a', principalId: 'alice', events: [note('ok-3')] }),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as BubbleError).code))).toEqual([
      'ok',
      'forbidden',
      'conflict',
      'ok',
      'conflict',
      'ok',
    ]);
    const a = await store.readEventsAfter('th_a', 1, 100);
    expect(a.events.map((e) => [e.seq, e.data.text])).toEqual([
      [2, 'ok-1'],
      [3, 'ok-3'],
    ]);
    // Still one transaction: one notification for the whole group.
    expect(await settledHints(1)).toEqual([
      {
        heads: [
          { threadId: 'th_a', headSeq: 3 },
          { threadId: 'th_b', headSeq: 2 },
        ],
      },
    ]);
  });

  it('undoes what a refused job staged: its seqs, clientEventIds and runs are free for the next job of the group', async () => {
    await twoThreads();
    const results = await Promise.allSettled([
      store.appendEvents({
        threadId: 'th_a',
        principalId: 'alice',
        events: [
          { type: 'acme.note', data: { text: 'x' }, clientEventId: 'c-1' },
          { type: 'run_started', data: { runId: 'r1' } },
          { type: 'run_started', data: { runId: 'r1' } },
        ],
      }),
      store.appendEvents({
        threadId: 'th_a',
        principalId: 'alice',
        events: [
          { type: 'acme.note', data: { text: 'y' }, clientEventId: 'c-1' },
          { type: 'run_started', data: { runId: 'r1' } },
        ],
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    const { events } = await store.readEventsAfter('th_a', 1, 10);
    expect(events.map((e) => [e.seq, e.type, e.clientEventId])).toEqual([
      [2, 'acme.note', 'c-1'],
      [3, 'run_started', null],
    ]);
    expect(events[0]!.data).toEqual({ text: 'y' });
  });

  it('decides each append on what the earlier jobs of its group did: grants made and ended, events, runs', async () => {
    await twoThreads();
    const [bobIn, bobWrites, bobOut, bobRefused, first, replay, runStart, runAgain] = await Promise.allSettled([
      store.putGrant({ threadId: 'th_a', principalId: 'bob', role: 'member', by: 'alice', mayChangeRole: false }),
      store.appendEvents({ threadId: 'th_a', principalId: 'bob', events: [note('bob is in')] }),
      store.revokeGrant({ threadId: 'th_a', principalId: 'bob', by: 'alice' }),
      store.appendEvents({ threadId: 'th_a', principalId: 'bob', events: [note('bob is out')] }),
      store.appendEvents({
        threadId: 'th_b',
        principalId: 'alice',
        events: [{ ...note('once'), clientEventId: 'c-1' }],
      }),
      store.appendEvents({
        threadId: 'th_b',
        principalId: 'alice',
        events: [{ ...note('once'), clientEventId: 'c-1' }],
      }),
      store.appendEvents({
        threadId: 'th_b',
        principalId: 'alice',
        events: [{ type: 'run_started', data: { runId: 'r' } }],
      }),
      store.appendEvents({
        threadId: 'th_b',
        principalId: 'alice',
        events: [{ type: 'run_started', data: { runId: 'r' } }],
      }),
    ]);
    expect([bobIn, bobWrites, bobOut].map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(bobRefused).toMatchObject({ status: 'rejected', reason: { code: 'forbidden' } });
    expect(first.status === 'fulfilled' && replay.status === 'fulfilled' && replay.value).toEqual({
      events: first.status === 'fulfilled' ? first.value.events : [],
      replay: true,
    });
    expect(runStart.status).toBe('fulfilled');
    expect(runAgain).toMatchObject({ status: 'rejected', reason: { code: 'conflict' } });
    expect((await settledHints(1)).length).toBe(1);
  });

  it('runs the jobs of a group again one by one when a statement fails, so the others still commit', async () => {
    await twoThreads();
    await store.addToken({ tokenId: 'tok_taken', principalId: 'alice', hash: hashToken('s-1') });
    await settledHints(0);
    published.length = 0;
    const results = await Promise.allSettled([
      store.appendEvents({ threadId: 'th_a', principalId: 'alice', events: [note('before')] }),
      // A unique violation inside the transaction: PostgreSQL aborts it, so the group cannot go on.
      store.addToken({ tokenId: 'tok_taken', principalId: 'alice', hash: hashToken('s-2') }),
      store.appendEvents({ threadId: 'th_b', principalId: 'alice', events: [note('after')] }),
    ]);
    expect(results[0]!.status).toBe('fulfilled');
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: '23505' } });
    expect(results[2]!.status).toBe('fulfilled');
    expect((await store.readEventsAfter('th_a', 1, 10)).events.map((e) => e.data.text)).toEqual(['before']);
    expect((await store.readEventsAfter('th_b', 1, 10)).events.map((e) => e.data.text)).toEqual(['after']);
    expect(await store.findLiveTokenByHash(hashToken('s-2'))).toBeNull();
    // Each job alone in its own transaction: a commit, a notification and a publication each, in job order.
    expect(await settledHints(2)).toEqual([
      { heads: [{ threadId: 'th_a', headSeq: 2 }] },
      { heads: [{ threadId: 'th_b', headSeq: 2 }] },
    ]);
    expect(published.map((m) => m.map((x) => x.kind === 'events' && x.threadId))).toEqual([['th_a'], ['th_b']]);
  });

  it('refuses a job whose own statement fails for good (a NUL in a title), and commits the others in two groups, not one by one', async () => {
    // The HTTP API refuses a NUL before any transaction (text-rules.test.ts); the store is asked here directly.
    await twoThreads();
    const results = await Promise.allSettled([
      store.appendEvents({ threadId: 'th_a', principalId: 'alice', events: [note('a1')] }),
      store.appendEvents({ threadId: 'th_a', principalId: 'alice', events: [note('a2')] }),
      store.createThread({
        threadId: 'th_nul',
        parentThreadId: null,
        title: 'a\u0000b',
        createdBy: 'alice',
        key: null,
      }),
      store.appendEvents({ threadId: 'th_b', principalId: 'alice', events: [note('b1')] }),
      store.appendEvents({ threadId: 'th_b', principalId: 'alice', events: [note('b2')] }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // A data exception, as PostgreSQL gave it: not a 503, and not run again.
    expect(results[2]).toMatchObject({ status: 'rejected', reason: { code: '22021' } });
    expect(await store.getThread('th_nul')).toBeNull();
    expect((await store.readEventsAfter('th_a', 1, 10)).events.map((e) => e.data.text)).toEqual(['a1', 'a2']);
    expect((await store.readEventsAfter('th_b', 1, 10)).events.map((e) => e.data.text)).toEqual(['b1', 'b2']);
    // The jobs before it commit together again, the jobs after it together next: two commits, not four.
    expect(published.map((m) => m.map((x) => x.kind === 'events' && x.threadId))).toEqual([
      ['th_a', 'th_a'],
      ['th_b', 'th_b'],
    ]);
  });

  it('sends the overflow form when the heads of a commit would not fit in one notification', async () => {
    await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
    const ids = Array.from({ length: 150 }, (_, i) => `th_${String(i).padStart(3, '0')}_${'x'.repeat(60)}`);
    await Promise.all(
      ids.map((threadId) =>
        store.createThread({ threadId, parentThreadId: null, title: null, createdBy: 'alice', key: null }),
      ),
    );
    const [hint] = await settledHints(1);
    expect(hint).toEqual({ heads: [], overflow: true, outbox: await store.outboxHead() });
  });
});

describe('clusterHintPayload', () => {
  it('lists the heads while they fit, else says overflow, keeping the outbox id either way', () => {
    expect(JSON.parse(clusterHintPayload(new Map([['th_1', 3]]), undefined))).toEqual({
      heads: [{ threadId: 'th_1', headSeq: 3 }],
    });
    const many = new Map(Array.from({ length: 400 }, (_, i) => [`th_${i}_${'y'.repeat(20)}`, i] as [string, number]));
    expect(JSON.parse(clusterHintPayload(many, 12))).toEqual({ heads: [], overflow: true, outbox: 12 });
    expect(JSON.parse(clusterHintPayload(many, undefined))).toEqual({ heads: [], overflow: true });
  });
});
