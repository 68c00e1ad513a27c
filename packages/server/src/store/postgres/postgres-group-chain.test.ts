import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { PostgresGroupCommit, type WriteJob } from './postgres-group-commit.js';
import { createPool } from './postgres-pool.js';
import { openPostgresStore, type PostgresStore } from './postgres-store.js';
import type { WriteTx } from './postgres-write-tx.js';

/**
 * The writer sends the next group's BEGIN, locks and facts right behind a group's COMMIT, on the
 * same pipelined connection (`postgres-group-commit.ts`). These jobs queue the next group from
 * inside a running one, so it is opened behind that group's COMMIT for certain.
 */
let db: TestDatabase;
let store: PostgresStore;
let pool: pg.Pool;
let writer: PostgresGroupCommit;
let commits: LiveBusMessage[][];

const note = (tx: WriteTx, threadId: string, text: string) =>
  tx.appendEvent({ threadId, principalId: 'alice', type: 'acme.note', data: { text }, clientEventId: null });

/** Appends `text` to th_a, as the store's own appends do (declared thread, head read under its lock). */
const append = (text: string, before?: (tx: WriteTx) => Promise<void>): WriteJob<number> => ({
  threads: ['th_a'],
  run: async (tx) => {
    await tx.head('th_a');
    await before?.(tx);
    const event = note(tx, 'th_a', text);
    tx.emit({ kind: 'events', threadId: 'th_a', events: [event] });
    return event.seq;
  },
});

async function texts(): Promise<Array<[number, unknown]>> {
  const { events } = await store.readEventsAfter('th_a', 1, 100);
  return events.map((e) => [e.seq, e.data.text]);
}

describe('PostgreSQL group commit, the next group opened behind a COMMIT', () => {
  beforeEach(async () => {
    db = await freshDatabase('group_chain');
    store = await openPostgresStore(db.url);
    await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] });
    await store.createThread({ threadId: 'th_a', parentThreadId: null, title: null, createdBy: 'alice', key: null });
    pool = createPool(db.url, {}, { connections: 1, pipeline: true });
    commits = [];
    writer = new PostgresGroupCommit(
      pool,
      () => new Date(),
      (messages) => commits.push(messages),
    );
  });
  afterEach(async () => {
    await writer.drained();
    await pool.end();
    await store.close();
    await db.drop();
  });

  it('opens the next group after the COMMIT it sits behind: it sees that commit, and commits after it', async () => {
    let second: Promise<number> | undefined;
    const first = writer.enqueue(
      append('first', async () => {
        second = writer.enqueue(append('second'));
      }),
    );
    expect(await first).toBe(2);
    expect(await second).toBe(3);
    expect(await texts()).toEqual([
      [2, 'first'],
      [3, 'second'],
    ]);
    // Two groups, published in commit order.
    expect(commits.map((m) => m.map((x) => x.kind === 'events' && x.events[0]!.data.text))).toEqual([
      ['first'],
      ['second'],
    ]);
  });

  it('rolls back the group opened behind a COMMIT that failed, and runs its jobs after the failed ones, untouched', async () => {
    let runs = 0;
    let queued: Promise<number> | undefined;
    // Writes seq 2 itself, then stages seq 2 as well: the group's insert fails at COMMIT time.
    const clash = append('clash', async (tx) => {
      await tx.write(
        `INSERT INTO events (thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at)
         VALUES ('th_a', 2, 'ev_written', 'acme.note', 'alice', '{"text":"written"}', NULL, $1)`,
        [tx.nowIso],
      );
      queued ??= writer.enqueue({
        ...append('queued behind'),
        run: async (inner) => {
          runs += 1;
          return append('queued behind').run(inner);
        },
      });
    });
    const results = await Promise.allSettled([writer.enqueue(clash), writer.enqueue(append('same group'))]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { code?: string }).code))).toEqual([
      '23505',
      2,
    ]);
    expect(await queued).toBe(3);
    // The queued job ran once: the group it was opened in was rolled back before any of its jobs ran.
    expect(runs).toBe(1);
    expect(await texts()).toEqual([
      [2, 'same group'],
      [3, 'queued behind'],
    ]);
  });

  it('still drops a refused job from a chained group and commits the rest with it', async () => {
    let chained: Promise<PromiseSettledResult<number>[]> | undefined;
    await writer.enqueue(
      append('first', async () => {
        chained = Promise.allSettled([
          writer.enqueue(append('kept')),
          writer.enqueue({
            threads: ['th_a'],
            run: async (tx) => {
              await tx.head('th_a');
              note(tx, 'th_a', 'refused');
              throw new Error('refused before writing');
            },
          }),
          writer.enqueue(append('kept too')),
        ]);
      }),
    );
    const results = await chained!;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await texts()).toEqual([
      [2, 'first'],
      [3, 'kept'],
      [4, 'kept too'],
    ]);
    // One transaction for the chained group: one publication.
    expect(commits).toHaveLength(2);
  });
});
