import type pg from 'pg';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { AppendFactsCache, type AppendKeys, type FactRow } from './postgres-append-facts.js';
import {
  isConnectionLost,
  isQueryTimeout,
  isRaceLost,
  pgErrorKind,
  StoreUnavailableError,
  toStoreError,
} from './postgres-errors.js';
import {
  CURRENT_XID_SQL,
  closingStatements,
  LOCK_THREADS_SQL,
  notifyStatement,
  SESSION_SQL,
  TERMINATE_SESSION_SQL,
  XACT_STATUS_SQL,
} from './postgres-group-sql.js';
import { preparedName, sendAll, type Statement } from './postgres-pipeline.js';
import { connectOrUnavailable } from './postgres-pool.js';
import { GroupState, JobTx, type WriterSession, type WriteTx } from './postgres-write-tx.js';

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

/** A group whose transaction is open, or opening, on the writer's connection. */
interface OpenGroup {
  batch: Pending[];
  client: pg.PoolClient;
  group: GroupState;
  /** BEGIN, the group's locks and the facts of its appends, sent; settles once they are answered. */
  opened: Promise<void>;
}

/**
 * How often, and how many times, a COMMIT still in progress when it went unanswered is asked about
 * before its session is ended (and as many times after), and how long one question may take.
 */
const XACT_STATUS_RETRY_MS = 100;
const XACT_STATUS_ASKS = 20;
const XACT_STATUS_TIMEOUT_MS = 5_000;

type Attempt =
  | { ok: true; outcomes: Outcome[]; messages: LiveBusMessage[]; next: OpenGroup | undefined }
  | {
      ok: false;
      error: unknown;
      committing: boolean;
      /** The index of the job whose own statement (or refusal after writing) failed the group, if one did. */
      culprit?: number | undefined;
    };

/**
 * Group commit on PostgreSQL, as `../sqlite/group-commit.ts` on SQLite: the writes queued while
 * the previous group commits go together in one transaction, one at a time, so this store's
 * commits (and `onCommit`) come in one order.
 *
 * In a group: the rows of every thread its jobs declare are locked first, in thread id order, so
 * groups of several instances locking overlapping threads cannot deadlock; then the jobs run one
 * after another on the one connection; then the group's staged events go in one multi-row insert,
 * thread heads, runs and log entries likewise, one `pg_notify` on `CLUSTER_CHANNEL` carries the
 * new heads and outbox id, and COMMIT. A job refused before it writes is dropped from the group
 * (see `WriteTx`). A job whose own statement fails with an error that is not transient (a data
 * exception, a constraint other than a unique key, `pgErrorKind`'s `permanent`) is refused, and the
 * rest of its group goes on without it: the jobs before it as one group again, those after it in the
 * next. Any other failure rolls the group back and runs each job again alone, in its own
 * transaction (no savepoints: PostgreSQL slows sharply past 64 subtransactions). A query
 * the database does not answer within the client's timeout (`queryTimeoutMs`: a partition, a
 * stopped backend) fails the whole group with 503 at once, nothing run again, and node-postgres
 * closes the connection; the next group opens a new one.
 *
 * A COMMIT whose answer never came (the connection lost or timed out once it was sent) may have
 * committed: the group's transaction id, read with its BEGIN, is then looked up on a new
 * connection (`pg_xact_status`). Committed, the group is answered as if the COMMIT's answer had
 * come, so a client that would resend without a clientEventId duplicates nothing; aborted or
 * unknown, or with the database not answering that either, its jobs are refused with 503 and
 * none is run again.
 *
 * Round trips: the writer's connection is pipelined (`postgres-pipeline.ts`). A group's BEGIN,
 * locks and facts go in one, its writes, notification and COMMIT in another, and the next group's
 * BEGIN, locks and facts are sent right behind that COMMIT: PostgreSQL runs them once the COMMIT is
 * done (so the next group sees it, and waits for no lock of it), and their answers come back with
 * the COMMIT's. While groups follow one another, each costs one round trip. A group that fails
 * after the next one was opened behind it rolls that one back too, and its jobs go back to the
 * front of the queue, untouched.
 */
export class PostgresGroupCommit {
  #queue: Pending[] = [];
  #running = false;
  #idle: Array<() => void> = [];
  readonly #pool: pg.Pool;
  readonly #now: () => Date;
  readonly #onCommit: (messages: LiveBusMessage[]) => void;
  /** The writer's connection, held while groups follow one another. */
  #client: pg.PoolClient | null = null;
  /** Who that connection is on the database, to ask about a lost COMMIT later (see `#committed`). */
  #session: WriterSession | undefined;

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
    let next: OpenGroup | undefined;
    while (next !== undefined || this.#queue.length > 0) {
      let current = next;
      if (current === undefined) {
        const batch = this.#takeQueue();
        try {
          current = this.#open(await this.#connection(), batch);
        } catch (error) {
          // No connection could be had at all: each job alone would only wait for one again.
          for (const pending of batch) pending.reject(toStoreError(error));
          continue;
        }
      }
      next = await this.#commitGroup(current);
    }
    this.#release();
    this.#running = false;
    for (const waiter of this.#idle.splice(0)) waiter();
  }

  #takeQueue(): Pending[] {
    const batch = this.#queue;
    this.#queue = [];
    return batch;
  }

  /** The writer's connection: the one held, or a fresh one from its pool (a 503 when none can be had). */
  async #connection(): Promise<pg.PoolClient> {
    if (this.#client !== null) return this.#client;
    const client = await connectOrUnavailable(this.#pool);
    // A checked-out client's own 'error' event has no listener in the pool: without this one it would crash us.
    client.on('error', ignoreClientError);
    try {
      this.#session = (await client.query<WriterSession>(SESSION_SQL)).rows[0];
    } catch (error) {
      client.off('error', ignoreClientError);
      client.release(error instanceof Error ? error : new Error(String(error)));
      throw toStoreError(error);
    }
    this.#client = client;
    return client;
  }

  /** Gives the connection back; one that failed at the connection level is closed instead. */
  #release(broken?: unknown): void {
    const client = this.#client;
    if (client === null) return;
    this.#client = null;
    client.off('error', ignoreClientError);
    client.release(broken instanceof Error ? broken : broken === undefined ? undefined : new Error(String(broken)));
  }

  /**
   * Commits a group (and, if jobs queued meanwhile, opens the next behind its COMMIT, which it
   * answers); on failure, each of its jobs alone.
   */
  async #commitGroup(open: OpenGroup): Promise<OpenGroup | undefined> {
    const attempt = await this.#attempt(open, true);
    if (attempt.ok) {
      this.#settle(open.batch, attempt);
      return attempt.next;
    }
    if (attempt.committing || attempt.error instanceof StoreUnavailableError || isQueryTimeout(attempt.error)) {
      // The connection died during COMMIT and the database could not say the group committed (it may
      // have, so no job may run again), or no connection could be had at all, or the database answered
      // nothing in time (each job alone would only wait as long again).
      for (const pending of open.batch) pending.reject(toStoreError(attempt.error));
      return undefined;
    }
    const blamed = attempt.culprit === undefined ? undefined : open.batch[attempt.culprit];
    if (open.batch.length > 1 && blamed !== undefined && isOwnPermanentFailure(attempt.error)) {
      // That job's own statement failed, and would fail the same way again: it is refused, never run
      // again. The jobs before it ran without fault, so they commit again as one group; those after it
      // never ran, so they go back to the front of the queue. No job runs more than twice for this.
      blamed.reject(toStoreError(attempt.error));
      const index = attempt.culprit!;
      this.#queue.unshift(...open.batch.slice(index + 1));
      const before = open.batch.slice(0, index);
      if (before.length === 0) return undefined;
      try {
        return this.#open(await this.#connection(), before);
      } catch (error) {
        for (const pending of before) pending.reject(toStoreError(error));
        return undefined;
      }
    }
    if (open.batch.length > 1) for (const pending of open.batch) await this.#commitAlone(pending);
    else if (isConnectionLost(attempt.error) || isRaceLost(attempt.error))
      await this.#commitAlone(open.batch[0]!, false);
    else open.batch[0]!.reject(toStoreError(attempt.error));
    return undefined;
  }

  /**
   * A job in its own transaction. One that lost its connection before COMMIT (other than to a
   * query timeout), or lost a race with another instance's transaction, runs once more (with `retry`).
   */
  async #commitAlone(pending: Pending, retry = true): Promise<void> {
    let attempt: Attempt;
    try {
      attempt = await this.#attempt(this.#open(await this.#connection(), [pending]), false);
    } catch (error) {
      attempt = { ok: false, error, committing: false };
    }
    if (attempt.ok) this.#settle([pending], attempt);
    else if (
      !attempt.committing &&
      retry &&
      !isQueryTimeout(attempt.error) &&
      (isConnectionLost(attempt.error) || isRaceLost(attempt.error))
    ) {
      await this.#commitAlone(pending, false);
    } else pending.reject(toStoreError(attempt.error));
  }

  #settle(batch: Pending[], attempt: Extract<Attempt, { ok: true }>): void {
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
  }

  /** Sends a group's BEGIN, locks and facts (behind whatever the connection was sent before). */
  #open(client: pg.PoolClient, batch: Pending[]): OpenGroup {
    const group = new GroupState();
    group.session = this.#session;
    const opened = this.#lockAndRead(client, group, batch);
    // Awaited by the attempt; this only keeps a failure seen before then from being reported as unhandled.
    opened.catch(() => {});
    return { batch, client, group, opened };
  }

  /**
   * Runs the jobs of an opened group and commits it; with `chain`, the jobs queued by then are
   * opened as the next group behind the COMMIT. On failure the transaction is rolled back (and the
   * next group with it, its jobs put back at the front of the queue), and a connection that failed
   * is given up.
   */
  async #attempt(open: OpenGroup, chain: boolean): Promise<Attempt> {
    const { client, group, batch } = open;
    let committing = false;
    let next: OpenGroup | undefined;
    let culprit: number | undefined;
    const outcomes: Outcome[] = [];
    try {
      await open.opened;
      for (const pending of batch) {
        const tx = new JobTx(client, group, this.#now().toISOString());
        try {
          outcomes.push({ ok: true, value: await pending.job.run(tx) });
        } catch (error) {
          if (tx.wrote || group.failed) {
            culprit = outcomes.length;
            throw error;
          }
          tx.rollBack();
          outcomes.push({ ok: false, error });
        }
      }
      const closing = closingStatements(group);
      let final = [...closing.writes];
      if (closing.logs.length > 0) {
        const results = await sendAll(client, [...closing.writes, ...closing.logs]);
        const ids = closing.answersOutbox ? (results[results.length - 1]!.rows as Array<{ id: number }>) : [];
        final = [notifyStatement(closing.heads, ids.length > 0 ? Math.max(...ids.map((r) => r.id)) : undefined)];
      }
      committing = true;
      const committed = sendAll(client, [...final, { sql: 'COMMIT' }]);
      if (chain && this.#queue.length > 0) next = this.#open(client, this.#takeQueue());
      const results = await committed;
      // A transaction PostgreSQL had already aborted answers COMMIT with ROLLBACK, and no error.
      const command = results[results.length - 1]?.command;
      if (command !== 'COMMIT') throw new Error(`COMMIT answered ${command ?? 'nothing'}: the group was rolled back`);
      return { ok: true, outcomes, messages: group.messages, next };
    } catch (error) {
      const lost = isConnectionLost(error);
      // Sent with COMMIT, a failed statement turns that COMMIT into a rollback: only a lost connection leaves it open.
      const unknownOutcome = committing && lost;
      if (next !== undefined) {
        await next.opened.catch(() => {});
        this.#queue.unshift(...next.batch);
      }
      if (lost) this.#release(error);
      else {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => this.#release(rollbackError));
      }
      if (
        unknownOutcome &&
        group.xid !== undefined &&
        group.session &&
        (await this.#committed(group.xid, group.session))
      )
        return { ok: true, outcomes, messages: group.messages, next: undefined };
      return { ok: false, error, committing: unknownOutcome, culprit };
    }
  }

  /**
   * Whether the transaction `xid`, whose COMMIT went unanswered on `session`, committed: asked on a
   * new writer connection (which the next group then uses). False when it aborted, when the
   * database no longer knows it, when it cannot be asked, or when the database has restarted since
   * (its transaction ids may then have been given out again). One still in progress (its backend
   * finishing the COMMIT, waiting for a synchronous standby, not yet aware that its client is gone)
   * is asked about again; still in progress after two seconds, its session is ended, which settles
   * it one way or the other, and it is asked about as long again: an answer of 503 must mean it
   * will never commit, or a client that resends duplicates it.
   */
  async #committed(xid: string, session: WriterSession): Promise<boolean> {
    const ask = async <R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R | undefined> => {
      const client = await this.#connection();
      // node-postgres takes a per-query timeout its types do not declare.
      const config: pg.QueryConfig & { query_timeout: number } = {
        text,
        values,
        query_timeout: XACT_STATUS_TIMEOUT_MS,
      };
      return (await client.query<R>(config)).rows[0];
    };
    for (let asked = 1; asked <= 2 * XACT_STATUS_ASKS; asked += 1) {
      try {
        const row = await ask<{ status: string | null; started: string }>(XACT_STATUS_SQL, [xid]);
        if (row === undefined || row.started !== session.started) return false;
        if (row.status !== 'in progress') return row.status === 'committed';
        if (asked === XACT_STATUS_ASKS) await ask(TERMINATE_SESSION_SQL, [session.pid, session.backendStart]);
      } catch (error) {
        // Lost, timed out (node-postgres then closes a pipelined connection) or refused: the next group starts afresh.
        this.#release(error);
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, XACT_STATUS_RETRY_MS));
    }
    return false;
  }

  /**
   * BEGIN and the transaction's id, then, in one statement and in thread id order, the locks of
   * every thread the group's jobs declared, then the facts of its appends: sent together, one round
   * trip. A job that finds its threads by reading (an invite's) reads after BEGIN, so that case
   * takes one more.
   */
  async #lockAndRead(client: pg.PoolClient, group: GroupState, batch: Pending[]): Promise<void> {
    const ids = new Set<string>();
    for (const { job } of batch) for (const id of job.threads ?? []) ids.add(id);
    const statements: Statement[] = [{ sql: 'BEGIN' }, { sql: CURRENT_XID_SQL, name: preparedName(CURRENT_XID_SQL) }];
    const xidOf = (results: pg.QueryResult[]): string => (results[1]!.rows[0] as { xid: string }).xid;
    if (batch.some(({ job }) => job.findThreads !== undefined)) {
      group.xid = xidOf(await sendAll(client, statements.splice(0)));
      const reader = {
        read: async <R>(sql: string, params: readonly unknown[] = []) =>
          (await client.query(sql, params as unknown[])).rows as R[],
      };
      for (const { job } of batch) if (job.findThreads) for (const id of await job.findThreads(reader)) ids.add(id);
    }
    const sorted = [...ids].sort();
    const lockAt = statements.length;
    if (sorted.length > 0)
      statements.push({ sql: LOCK_THREADS_SQL, params: [sorted], name: preparedName(LOCK_THREADS_SQL) });
    const appends = batch.flatMap(({ job }) => (job.appendKeys ? [job.appendKeys] : []));
    const facts = appends.length > 0 ? new AppendFactsCache(appends) : undefined;
    if (facts) statements.push(facts.statement());
    if (statements.length === 0) return;
    const results = await sendAll(client, statements);
    // Unless it came back with a BEGIN sent on its own, above.
    group.xid ??= xidOf(results);
    if (sorted.length > 0) {
      for (const id of sorted) group.heads.set(id, null);
      for (const row of results[lockAt]!.rows as Array<{ thread_id: string; head_seq: number }>) {
        group.heads.set(row.thread_id, row.head_seq);
      }
    }
    if (facts) group.facts = facts.absorb(results[results.length - 1]!.rows as FactRow[]);
  }
}

const ignoreClientError = (): void => {};

/**
 * Whether a job's failure is its own and final: PostgreSQL refused its statement with an error
 * that is not transient (`pgErrorKind`), other than 25P02, which only says that an earlier
 * statement had already failed the transaction. Anything else (a refusal of the job's own after it
 * wrote) keeps the old way: each job again alone.
 */
function isOwnPermanentFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && code !== '25P02' && pgErrorKind(error) === 'permanent'
  );
}
