import type pg from 'pg';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { CLUSTER_CHANNEL, type ClusterHint } from '../cluster-feed.js';
import { AppendFactsCache, type AppendKeys } from './postgres-append-facts.js';
import { isConnectionLost, isRaceLost, StoreUnavailableError, toStoreError } from './postgres-errors.js';
import { connectOrUnavailable } from './postgres-pool.js';
import { GroupState, JobTx, type WriteTx } from './postgres-write-tx.js';

/** A write: the threads it appends to (locked up front, in the group's one sorted pass), and its body. */
export interface WriteJob<T> {
  /** Threads whose head this job reads or moves. */
  threads?: readonly string[];
  /** What an append decides on, read for every append of the group in one statement after the locks. */
  appendKeys?: AppendKeys;
  /** Threads found by reading (an invite's thread), before the group takes its locks. */
  findThreads?: (tx: Pick<WriteTx, 'read'>) => Promise<readonly string[]>;
  /** May run twice (a group that fails runs its jobs again one by one): its only effects go through `tx`. */
  run(tx: WriteTx): Promise<T>;
}

interface Pending {
  job: WriteJob<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The advisory lock that orders the writers of the two logs other processes read by id (token
 * revocations, the outbox): held from the insert to the commit, so ids commit in id order and a
 * reader that moved past an id never finds a smaller one later. Taken last in a group, after the
 * thread locks, so it never waits while holding anything another writer of it waits for.
 */
const LOG_LOCK_KEY = 7_352_114_001;

/** PostgreSQL refuses a notification payload of 8,000 bytes or more; leave room. */
const MAX_HINT_BYTES = 7_500;

/**
 * Group commit on PostgreSQL, as `../sqlite/group-commit.ts` on SQLite: the writes queued while
 * the previous group commits go together in one transaction, one at a time, so this store's
 * commits (and `onCommit`) come in one order.
 *
 * In a group: the rows of every thread its jobs declare are locked first, in thread id order, so
 * groups of several instances locking overlapping threads cannot deadlock; then the jobs run one
 * after another on the one connection; then the group's staged events go in one multi-row insert,
 * thread heads, runs and log entries likewise, one `pg_notify` on {@link CLUSTER_CHANNEL} carries the
 * new heads and outbox id, and COMMIT. A job refused before it writes is dropped from the group
 * (see `WriteTx`); any other failure rolls the group back and runs each job again alone, in its
 * own transaction (no savepoints: PostgreSQL slows sharply past 64 subtransactions).
 */
export class PostgresGroupCommit {
  #queue: Pending[] = [];
  #running = false;
  #idle: Array<() => void> = [];
  readonly #pool: pg.Pool;
  readonly #now: () => Date;
  readonly #onCommit: (messages: LiveBusMessage[]) => void;

  constructor(pool: pg.Pool, now: () => Date, onCommit: (messages: LiveBusMessage[]) => void) {
    this.#pool = pool;
    this.#now = now;
    this.#onCommit = onCommit;
  }

  enqueue<T>(job: WriteJob<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ job: job as WriteJob<unknown>, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#running) {
        this.#running = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  /** Resolves once nothing is queued or committing. */
  drained(): Promise<void> {
    if (!this.#running && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      await this.#commitGroup(batch);
    }
    this.#running = false;
    for (const waiter of this.#idle.splice(0)) waiter();
  }

  /**
   * Commits a group; on failure, each of its jobs alone. A lone job that lost its connection before
   * COMMIT, or lost a race with another instance's transaction, runs once more.
   */
  async #commitGroup(batch: Pending[], retry = true): Promise<void> {
    const attempt = await this.#attempt(batch);
    if (attempt.ok) {
      try {
        if (attempt.messages.length > 0) this.#onCommit(attempt.messages);
      } catch {
        // A listener's failure must not undo or block a committed write.
      }
      batch.forEach((pending, i) => {
        const outcome = attempt.outcomes[i]!;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(toStoreError(outcome.error));
      });
      return;
    }
    if (attempt.committing || attempt.error instanceof StoreUnavailableError) {
      // The connection died during COMMIT (the group may or may not have committed, so no job may run
      // again), or no connection could be had at all (each job alone would only wait for one again).
      for (const pending of batch) pending.reject(toStoreError(attempt.error));
      return;
    }
    if (batch.length > 1) {
      for (const pending of batch) await this.#commitGroup([pending]);
      return;
    }
    if (retry && (isConnectionLost(attempt.error) || isRaceLost(attempt.error))) {
      await this.#commitGroup(batch, false);
      return;
    }
    batch[0]!.reject(toStoreError(attempt.error));
  }

  async #attempt(
    batch: Pending[],
  ): Promise<
    { ok: true; outcomes: Outcome[]; messages: LiveBusMessage[] } | { ok: false; error: unknown; committing: boolean }
  > {
    let client: pg.PoolClient;
    try {
      client = await connectOrUnavailable(this.#pool);
    } catch (error) {
      return { ok: false, error, committing: false };
    }
    // A checked-out client's own 'error' event has no listener in the pool: without this one it would crash us.
    const onClientError = (): void => {};
    client.on('error', onClientError);
    const group = new GroupState();
    let committing = false;
    let broken: unknown;
    try {
      await client.query('BEGIN');
      await this.#lockThreads(client, group, batch);
      const outcomes: Outcome[] = [];
      for (const pending of batch) {
        const tx = new JobTx(client, group, this.#now().toISOString());
        try {
          outcomes.push({ ok: true, value: await pending.job.run(tx) });
        } catch (error) {
          if (tx.wrote || group.failed) throw error;
          tx.rollBack();
          outcomes.push({ ok: false, error });
        }
      }
      await this.#flush(client, group);
      committing = true;
      await client.query('COMMIT');
      return { ok: true, outcomes, messages: group.messages };
    } catch (error) {
      if (!committing) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError;
        });
      }
      if (isConnectionLost(error) || committing) broken ??= error;
      return { ok: false, error, committing: committing && isConnectionLost(error) };
    } finally {
      client.off('error', onClientError);
      // A client that failed at the connection level is closed rather than handed to the next request.
      client.release(broken instanceof Error ? broken : broken === undefined ? undefined : new Error(String(broken)));
    }
  }

  /** Locks, in one statement and in thread id order, every thread the group's jobs declared. */
  async #lockThreads(client: pg.PoolClient, group: GroupState, batch: Pending[]): Promise<void> {
    const ids = new Set<string>();
    const reader = {
      read: async <R>(sql: string, params: readonly unknown[] = []) =>
        (await client.query(sql, params as unknown[])).rows as R[],
    };
    for (const { job } of batch) {
      for (const id of job.threads ?? []) ids.add(id);
      if (job.findThreads) for (const id of await job.findThreads(reader)) ids.add(id);
    }
    if (ids.size === 0) return;
    const sorted = [...ids].sort();
    const { rows } = await client.query<{ thread_id: string; head_seq: number }>(
      'SELECT thread_id, head_seq FROM threads WHERE thread_id = ANY($1::text[]) ORDER BY thread_id FOR UPDATE',
      [sorted],
    );
    for (const id of sorted) group.heads.set(id, null);
    for (const row of rows) group.heads.set(row.thread_id, row.head_seq);
    const appends = batch.flatMap(({ job }) => (job.appendKeys ? [job.appendKeys] : []));
    if (appends.length > 0) group.facts = await AppendFactsCache.load(client, appends);
  }

  /**
   * Writes what the group staged, then the one notification of this commit. The common commit (events,
   * heads, runs, no log entry) is one statement: its writes as data-modifying CTEs, the notification as
   * its SELECT. Log entries and outbox messages follow under the log lock, then the notification.
   */
  async #flush(client: pg.PoolClient, group: GroupState): Promise<void> {
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const writes: string[] = [];
    const heads = new Map<string, number>();
    if (group.events.length > 0) {
      const columns: unknown[][] = [[], [], [], [], [], [], [], []];
      for (const { envelope: e, dataJson } of group.events) {
        const values = [e.threadId, e.seq, e.id, e.type, e.principalId, dataJson, e.clientEventId, e.createdAt];
        for (const [i, value] of values.entries()) columns[i]!.push(value);
        heads.set(e.threadId, e.seq);
      }
      const types = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text'];
      writes.push(
        `new_events AS (INSERT INTO events (thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at)
           SELECT * FROM unnest(${columns.map((c, i) => `${param(c)}::${types[i]}[]`).join(', ')}))`,
        `new_heads AS (UPDATE threads t SET head_seq = v.head
           FROM unnest(${param([...heads.keys()])}::text[], ${param([...heads.values()])}::bigint[]) AS v(thread_id, head)
           WHERE t.thread_id = v.thread_id)`,
      );
    }
    if (group.runs.size > 0) {
      const runs = [...group.runs.values()];
      writes.push(`new_runs AS (INSERT INTO runs (thread_id, run_id, principal_id, started, finished)
        SELECT * FROM unnest(${param(runs.map((r) => r.threadId))}::text[], ${param(runs.map((r) => r.runId))}::text[],
          ${param(runs.map((r) => r.state.ownerPrincipalId))}::text[], ${param(runs.map((r) => r.state.started))}::boolean[],
          ${param(runs.map((r) => r.state.finished))}::boolean[])
        ON CONFLICT (thread_id, run_id) DO UPDATE SET started = excluded.started, finished = excluded.finished)`);
    }
    const outgoing = group.messages.filter((m) => m.kind !== 'events');
    const logs = group.revocations.length > 0 || outgoing.length > 0;
    const select =
      !logs && heads.size > 0
        ? `SELECT pg_notify(${param(CLUSTER_CHANNEL)}, ${param(clusterHintPayload(heads, undefined))})`
        : 'SELECT 1';
    if (writes.length > 0 || select !== 'SELECT 1') {
      await client.query(writes.length > 0 ? `WITH ${writes.join(',\n')} ${select}` : select, params);
    }
    if (!logs) return;
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOG_LOCK_KEY]);
    if (group.revocations.length > 0) {
      const r = group.revocations;
      await client.query(
        `INSERT INTO token_revocations (token_id, principal_id, revoked_at)
         SELECT t, p, at FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(t, p, at, n) ORDER BY n`,
        [r.map((x) => x.tokenId), r.map((x) => x.principalId), r.map((x) => x.revokedAt)],
      );
    }
    let outbox: number | undefined;
    if (outgoing.length > 0) {
      const { rows } = await client.query<{ id: number }>(
        `INSERT INTO outbox (message, created_at)
         SELECT m, $2 FROM unnest($1::json[]) WITH ORDINALITY AS r(m, n) ORDER BY n RETURNING id`,
        [outgoing.map((m) => JSON.stringify(m)), this.#now().toISOString()],
      );
      outbox = Math.max(...rows.map((row) => row.id));
    }
    await client.query('SELECT pg_notify($1, $2)', [CLUSTER_CHANNEL, clusterHintPayload(heads, outbox)]);
  }
}

/** The JSON of one commit's {@link ClusterHint}, or its overflow form when the heads would not fit. */
export function clusterHintPayload(heads: ReadonlyMap<string, number>, outbox: number | undefined): string {
  const withOutbox = (hint: ClusterHint): ClusterHint => (outbox === undefined ? hint : { ...hint, outbox });
  const full = JSON.stringify(withOutbox({ heads: [...heads].map(([threadId, headSeq]) => ({ threadId, headSeq })) }));
  if (Buffer.byteLength(full, 'utf8') <= MAX_HINT_BYTES) return full;
  return JSON.stringify(withOutbox({ heads: [], overflow: true }));
}
