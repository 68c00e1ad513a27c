/**
 * The cluster bus on the real PostgreSQL store, several "instances" (a store and a bus each) in
 * one process on one database: events appended through all of them reach every bus that serves
 * the thread once each and in order; outbox messages reach every other bus once and never come
 * back to the one that made them; and a bus whose notifications are all lost still catches up
 * by polling.
 */
import type { EventEnvelope } from '@bubble/protocol';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../test/support/test-postgres.js';
import type { LiveBusMessage } from '../live/live-bus.js';
import { CLUSTER_CHANNEL } from '../store/cluster-feed.js';
import { openPostgresStore, type PostgresStore } from '../store/postgres/postgres-store.js';
import { createClusterBus, type ClusterBus, type ClusterOptions } from './cluster-bus.js';

let db: TestDatabase;
let quiet: TestDatabase;
const opened: Array<{ bus: ClusterBus; store: PostgresStore }> = [];

beforeAll(async () => {
  db = await freshDatabase('cluster-bus');
  // A database nobody writes to: a bus that LISTENs there hears no notification at all.
  quiet = await freshDatabase('cluster-bus-quiet');
});

afterEach(async () => {
  for (const { bus, store } of opened.splice(0)) {
    await bus.close();
    await store.close();
  }
});

afterAll(async () => {
  await db?.drop();
  await quiet?.drop();
});

interface Instance {
  bus: ClusterBus;
  store: PostgresStore;
  messages: LiveBusMessage[];
  seqs(threadId: string): number[];
}

/** `now` is the instance's clock, its store's and its bus's. */
async function instance(options: ClusterOptions & { listenOn?: string } = {}): Promise<Instance> {
  const bus = createClusterBus({ logger: pino({ level: 'silent' }) });
  const now = options.now;
  const store = await openPostgresStore(db.url, {
    poolSize: 4,
    now: now === undefined ? undefined : () => new Date(now()),
    onCommit: (messages) => {
      for (const message of messages) bus.publish(message);
    },
  });
  opened.push({ bus, store });
  const feed = options.listenOn === undefined ? store : { ...store, connectionString: options.listenOn };
  await bus.join(feed, options);
  const messages: LiveBusMessage[] = [];
  bus.subscribe((message) => messages.push(message));
  const seqs = (threadId: string) =>
    messages.flatMap((m) => (m.kind === 'events' && m.threadId === threadId ? m.events.map((e) => e.seq) : []));
  return { bus, store, messages, seqs };
}

let next = 0;
async function thread(store: PostgresStore, members: string[]): Promise<string> {
  next += 1;
  const threadId = `th_bus${String(next).padStart(9, '0')}`;
  for (const principalId of ['alice', ...members]) {
    if ((await store.getPrincipal(principalId)) === null)
      await store.createPrincipal({ principalId, kind: 'human', displayName: null, ownerPrincipalIds: [] });
  }
  await store.createThread({ threadId, parentThreadId: null, title: null, createdBy: 'alice', key: null });
  for (const principalId of members)
    await store.putGrant({ threadId, principalId, role: 'member', by: 'alice', mayChangeRole: false });
  return threadId;
}

async function until(condition: () => boolean, what: string | (() => string), ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const append = (store: PostgresStore, threadId: string, principalId: string, count: number) =>
  store.appendEvents({
    threadId,
    principalId,
    events: Array.from({ length: count }, () => ({ type: 'acme.n', data: {} })),
  });

/** An `overflow` hint sent straight to the quiet channel's listeners: "re-check everything". */
async function notifyOverflow(): Promise<void> {
  const notifier = new pg.Client({ connectionString: quiet.url });
  await notifier.connect();
  try {
    await notifier.query('SELECT pg_notify($1, $2)', [CLUSTER_CHANNEL, JSON.stringify({ heads: [], overflow: true })]);
  } finally {
    await notifier.end();
  }
}

describe('createClusterBus on PostgreSQL', () => {
  it('publishes every event appended through any instance once, in order, on every bus that serves the thread', async () => {
    const [a, b, c] = [await instance(), await instance(), await instance()];
    const threadId = await thread(a.store, ['bob', 'carol']);
    await Promise.all([a, b].map((i) => i.bus.watchThread(threadId).ready));
    const head0 = (await a.store.threadHeads([threadId])).get(threadId)!;

    // Appends race through all three; the third does not serve the thread and reads nothing.
    const writes: Promise<unknown>[] = [];
    let appended = 0;
    for (let round = 0; round < 40; round += 1) {
      appended += 1 + (round % 3) + 1 + 2;
      writes.push(append(a.store, threadId, 'alice', 1 + (round % 3)));
      writes.push(append(b.store, threadId, 'bob', 1));
      writes.push(append(c.store, threadId, 'carol', 2));
    }
    await Promise.all(writes);
    const head = (await a.store.threadHeads([threadId])).get(threadId)!;
    expect(head).toBe(head0 + appended);
    await until(() => a.seqs(threadId).at(-1) === head && b.seqs(threadId).at(-1) === head, 'both buses at the head');
    await new Promise((r) => setTimeout(r, 100));
    // A published the thread's first events itself before anyone served it; from the watch on, all of them once.
    expect(a.seqs(threadId).filter((seq) => seq > head0)).toEqual(range(head0 + 1, head));
    expect(a.seqs(threadId).filter((seq) => seq <= head0)).toEqual(range(1, head0));
    expect(b.seqs(threadId)).toEqual(range(head0 + 1, head));
    // C published its own commits as they came (nobody there serves the thread), and nothing else.
    const cSeqs = c.seqs(threadId);
    expect(cSeqs).toHaveLength(80);
    expect([...cSeqs].sort((x, y) => x - y)).toEqual(cSeqs);
  });

  it('a watch resolves after the head is read: a subscriber reading the backlog then misses nothing', async () => {
    const [a, b] = [await instance(), await instance()];
    const threadId = await thread(a.store, ['bob']);
    const writing = (async () => {
      for (let i = 0; i < 30; i += 1) await append(a.store, threadId, 'alice', 1);
    })();
    await new Promise((r) => setTimeout(r, 20));
    const watch = b.bus.watchThread(threadId);
    const live: EventEnvelope[] = [];
    b.bus.subscribe((m) => {
      if (m.kind === 'events' && m.threadId === threadId) live.push(...m.events);
    });
    await watch.ready;
    const backlog = await b.store.readEventsAfter(threadId, 0, 1000);
    await writing;
    const head = (await a.store.threadHeads([threadId])).get(threadId)!;
    await until(() => (live.at(-1)?.seq ?? backlog.headSeq) === head, 'live up to the head');
    const seen = new Map<number, EventEnvelope>();
    for (const event of [...backlog.events, ...live]) seen.set(event.seq, event);
    expect([...seen.keys()].sort((x, y) => x - y)).toEqual(range(1, head));
    expect(live.map((e) => e.seq)).toEqual(range(live[0]?.seq ?? head + 1, head));
    watch.release();
  });

  it('delivers outbox messages to the other instances once, and never back to the one that made them', async () => {
    const [a, b] = [await instance(), await instance()];
    const threadId = await thread(a.store, []);
    await a.store.createPrincipal(
      { principalId: 'dave', kind: 'human', displayName: null, ownerPrincipalIds: [] },
      { tokenId: 'tok_dave1', principalId: 'dave', hash: Buffer.alloc(32, 7) },
    );
    const before = { a: a.messages.length, b: b.messages.length };
    await a.store.putGrant({ threadId, principalId: 'dave', role: 'member', by: 'alice', mayChangeRole: false });
    await a.store.revokeGrant({ threadId, principalId: 'dave', by: 'alice' });
    await b.store.putGrant({ threadId, principalId: 'dave', role: 'owner', by: 'alice', mayChangeRole: true });
    expect(await a.store.revokeTokens('dave', 'tok_dave1')).toEqual(['tok_dave1']);
    // Only dave's: the thread's creation (alice's grant) may still be on its way to B.
    const kinds = (i: Instance, from: number) =>
      i.messages
        .slice(from)
        .filter((m) => (m.kind === 'grant' && m.grant.principalId === 'dave') || m.kind === 'tokens_revoked')
        .map((m) => (m.kind === 'grant' ? `grant ${m.change} ${m.grant.role}` : m.kind));
    // Each exactly once; an own message may come before another instance's older one.
    const expected = ['grant added member', 'grant added owner', 'grant revoked member', 'tokens_revoked'];
    await until(
      () => kinds(a, before.a).length >= 4 && kinds(b, before.b).length >= 4,
      () => `four messages on each bus: A ${kinds(a, before.a).join(', ')}; B ${kinds(b, before.b).join(', ')}`,
    );
    // Two more polls: an own message read back from the outbox would show now.
    await new Promise((r) => setTimeout(r, 600));
    expect(kinds(a, before.a).sort()).toEqual(expected);
    expect(kinds(b, before.b).sort()).toEqual(expected);
  });

  it('an overflow hint makes a bus re-read the heads of every thread it serves, and the outbox', async () => {
    const a = await instance();
    // Its polls are far off: only the hint can make it read.
    const deaf = await instance({ listenOn: quiet.url, outboxPollMs: 60_000, headsRecheckMs: 60_000 });
    const threadIds = [await thread(a.store, []), await thread(a.store, [])];
    await Promise.all(threadIds.map((id) => deaf.bus.watchThread(id).ready));
    const heads0 = await a.store.threadHeads(threadIds);
    for (const id of threadIds) await append(a.store, id, 'alice', 2);
    await a.store.createPrincipal(
      { principalId: 'fay', kind: 'human', displayName: null, ownerPrincipalIds: [] },
      { tokenId: 'tok_fay1', principalId: 'fay', hash: Buffer.alloc(32, 11) },
    );
    await a.store.revokeTokens('fay', 'tok_fay1');
    await new Promise((r) => setTimeout(r, 100));
    expect(deaf.seqs(threadIds[0]!)).toEqual([]);
    await notifyOverflow();
    for (const id of threadIds) {
      const head0 = heads0.get(id)!;
      await until(() => deaf.seqs(id).at(-1) === head0 + 2, `the events of ${id} on the deaf bus`, 2_000);
      expect(deaf.seqs(id)).toEqual([head0 + 1, head0 + 2]);
    }
    await until(
      () => deaf.messages.some((m) => m.kind === 'tokens_revoked' && m.principalId === 'fay'),
      'the revocation on the deaf bus',
      2_000,
    );
  });

  it('a bus an hour ahead that missed pruned entries re-checks from when the database wrote them', async () => {
    const a = await instance();
    // Its polls are far off and it hears no notification: it reads only when woken below.
    const ahead = await instance({
      listenOn: quiet.url,
      outboxPollMs: 60_000,
      headsRecheckMs: 60_000,
      now: () => Date.now() + 3_600_000,
    });
    await a.store.createPrincipal(
      { principalId: 'gwen', kind: 'human', displayName: null, ownerPrincipalIds: [] },
      { tokenId: 'tok_gwen1', principalId: 'gwen', hash: Buffer.alloc(32, 13) },
    );
    await a.store.revokeTokens('gwen', 'tok_gwen1');
    // An entry after the revocation's, so that pruning takes the revocation's.
    await thread(a.store, []);
    while ((await a.store.pruneOutbox(0, 1_000)) > 0);
    expect(ahead.messages.some((m) => m.kind === 'tokens_revoked')).toBe(false);
    await notifyOverflow();
    // By its own clock it last read an hour from now, after gwen's revocation; by the database's, before it.
    await until(
      () => ahead.messages.some((m) => m.kind === 'tokens_revoked' && m.principalId === 'gwen'),
      'the pruned revocation, re-checked, on the bus an hour ahead',
      2_000,
    );
  });

  it('catches up by polling when every notification is lost', async () => {
    const a = await instance();
    const deaf = await instance({ listenOn: quiet.url, outboxPollMs: 100, headsRecheckMs: 200 });
    const threadId = await thread(a.store, []);
    await deaf.bus.watchThread(threadId).ready;
    const head0 = (await a.store.threadHeads([threadId])).get(threadId)!;
    await append(a.store, threadId, 'alice', 3);
    await a.store.createPrincipal(
      { principalId: 'erin', kind: 'human', displayName: null, ownerPrincipalIds: [] },
      { tokenId: 'tok_erin1', principalId: 'erin', hash: Buffer.alloc(32, 9) },
    );
    const revokedAt = performance.now();
    await a.store.revokeTokens('erin', 'tok_erin1');
    await until(
      () => deaf.messages.some((m) => m.kind === 'tokens_revoked' && m.principalId === 'erin'),
      'the revocation on the deaf bus',
      1_000,
    );
    expect(performance.now() - revokedAt).toBeLessThan(1_000);
    await until(() => deaf.seqs(threadId).at(-1) === head0 + 3, 'the events on the deaf bus', 2_000);
    expect(deaf.seqs(threadId)).toEqual(range(head0 + 1, head0 + 3));
  });
});
