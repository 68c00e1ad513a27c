import type { Database, Statement } from 'better-sqlite3';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { StoreUnavailableError } from '../store-errors.js';
import type { DurableSync } from '../store.js';

/**
 * A write job: runs inside the group's transaction. It may run twice (see
 * `GroupCommit`), so its only effects are on the database and through `emit`.
 */
export type WriteJob<T> = (emit: (message: LiveBusMessage) => void) => T;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
interface GroupRun {
  outcomes: Outcome[];
  messages: LiveBusMessage[];
}

interface QueuedJob {
  run: WriteJob<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** A committed group waiting for the sync that makes it durable. */
interface Unsynced {
  batch: QueuedJob[];
  run: GroupRun;
}

/** The seqs of a thread committed but not yet durable. */
interface UndurableSeqs {
  from: number;
  to: number;
}

/**
 * Group commit. Writes that arrive while the event loop is busy are queued and
 * committed together in one transaction (one sync of the disk). A group first runs without
 * savepoints; if a job throws, the attempt is rolled back and the group runs
 * again with each job in its own savepoint, so that one job's failure rolls back
 * only that job (the first attempt's results and messages are dropped: nothing
 * of it was committed or published). Promises settle only after COMMIT; the
 * live messages of the committed jobs are handed to `onCommit` right after
 * COMMIT, in job order, before any promise settles.
 *
 * With a `sync` (the connection at `synchronous = NORMAL`, so COMMIT writes the WAL without
 * waiting for the disk), "after COMMIT" means after the sync that follows it: a group is
 * committed at once, then one `sync` runs in the thread pool for every group committed since the
 * last one began, and only when it answers are those groups' messages published and their
 * promises settled, in commit order. The event loop no longer waits for the disk at every commit
 * (it still does at SQLite's automatic checkpoints, every 1,000 WAL pages), and a slow flush is
 * shared by every write that arrived meanwhile. Until then their events are committed but not
 * durable: `pendingFrom` tells the store's readers which seqs of a thread not to show yet, so no
 * one reads an event (or a head) that a power cut could still take back. Other rows of such a
 * group (a grant, a token, an artifact version) are readable at once: each was asked for by a
 * caller allowed to make it, and is answered only once durable. A failed sync fails its groups'
 * writes and every later one with a 503, and `assertHealthy` (the store's `ping`, so the
 * server's health check) fails from then on: what the disk holds is no longer known, and the
 * operator must restart the server.
 */
export class GroupCommit {
  #queue: QueuedJob[] = [];
  #scheduled = false;
  #idle: Array<() => void> = [];
  readonly #begin: Statement;
  readonly #commit: Statement;
  readonly #rollback: Statement;
  readonly #savepoint: Statement;
  readonly #release: Statement;
  readonly #rollbackTo: Statement;
  readonly #db: Database;
  readonly #onCommit: (messages: LiveBusMessage[]) => void;
  readonly #sync: DurableSync | undefined;
  /** Committed groups that no sync has covered yet, in commit order. */
  #unsynced: Unsynced[] = [];
  #syncing = false;
  #failed: Error | null = null;
  readonly #undurable = new Map<string, UndurableSeqs>();

  constructor(db: Database, onCommit: (messages: LiveBusMessage[]) => void, sync?: DurableSync) {
    this.#db = db;
    this.#onCommit = onCommit;
    this.#sync = sync;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT job');
    this.#release = db.prepare('RELEASE job');
    this.#rollbackTo = db.prepare('ROLLBACK TO job');
  }

  enqueue<T>(run: WriteJob<T>): Promise<T> {
    if (this.#failed !== null) return Promise.reject(this.#failed);
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /** Resolves once nothing is queued or waiting for its sync. */
  drained(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Throws once a sync has failed (see the class comment). */
  assertHealthy(): void {
    if (this.#failed !== null) throw this.#failed;
  }

  /**
   * The first seq of `threadId` that is committed but not durable yet (readers show only the
   * seqs below it), or undefined when every committed event of the thread is durable.
   */
  pendingFrom(threadId: string): number | undefined {
    return this.#undurable.get(threadId)?.from;
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 0) {
      // A failed sync refused what was queued.
      this.#notifyIdle();
      return;
    }
    try {
      this.#commitGroup(batch);
    } catch (error) {
      // Only reached when the database itself fails (BEGIN, COMMIT, a savepoint
      // statement): nothing of this group is committed, every job is refused.
      try {
        if (this.#db.inTransaction) this.#rollback.run();
      } catch {
        // The transaction is already gone; nothing more to undo.
      }
      for (const job of batch) job.reject(error);
    }
    this.#notifyIdle();
  }

  #commitGroup(batch: QueuedJob[]): void {
    this.#begin.run();
    // Most groups have no failing job: run them without a savepoint each. When one throws,
    // undo the whole attempt and run the group again with every job in its own savepoint.
    let ran = this.#runJobs(batch, false);
    if (ran === null) {
      if (this.#db.inTransaction) this.#rollback.run();
      this.#begin.run();
      ran = this.#runJobs(batch, true)!;
    }
    this.#commit.run();
    if (this.#sync === undefined) {
      this.#settle(batch, ran);
      return;
    }
    for (const message of ran.messages) {
      if (message.kind !== 'events' || message.events.length === 0) continue;
      const first = (message.events[0] as { seq: number }).seq;
      const last = (message.events[message.events.length - 1] as { seq: number }).seq;
      const seqs = this.#undurable.get(message.threadId);
      if (seqs === undefined) this.#undurable.set(message.threadId, { from: first, to: last });
      else seqs.to = last;
    }
    this.#unsynced.push({ batch, run: ran });
    this.#startSync();
  }

  /** Publishes a durable group's messages, then settles its promises. */
  #settle(batch: QueuedJob[], ran: GroupRun): void {
    if (ran.messages.length > 0) this.#onCommit(ran.messages);
    batch.forEach((job, i) => {
      const outcome = ran.outcomes[i];
      if (outcome?.ok) job.resolve(outcome.value);
      else job.reject(outcome?.error);
    });
  }

  /** One sync at a time; it covers every group committed before it began. */
  #startSync(): void {
    const sync = this.#sync;
    if (sync === undefined || this.#syncing || this.#unsynced.length === 0) return;
    this.#syncing = true;
    const covered = this.#unsynced;
    this.#unsynced = [];
    const finish = (error: Error | null): void => {
      this.#syncing = false;
      if (error !== null) this.#failSync(covered, error);
      else {
        for (const group of covered) {
          this.#markDurable(group.run.messages);
          try {
            this.#settle(group.batch, group.run);
          } catch {
            // A listener's failure must not stop the groups behind it.
          }
        }
      }
      this.#startSync();
      this.#notifyIdle();
    };
    try {
      sync(finish);
    } catch (error) {
      finish(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #markDurable(messages: readonly LiveBusMessage[]): void {
    for (const message of messages) {
      if (message.kind !== 'events' || message.events.length === 0) continue;
      const last = (message.events[message.events.length - 1] as { seq: number }).seq;
      const seqs = this.#undurable.get(message.threadId);
      if (seqs === undefined) continue;
      if (seqs.to <= last) this.#undurable.delete(message.threadId);
      else seqs.from = last + 1;
    }
  }

  /** The disk refused: these groups' writes, and every later one, fail; their events stay unread. */
  #failSync(covered: readonly Unsynced[], cause: Error): void {
    const error = new StoreUnavailableError(cause, 'the disk refused to make writes durable; restart the server');
    this.#failed = error;
    const groups = [...covered, ...this.#unsynced];
    this.#unsynced = [];
    for (const group of groups) for (const job of group.batch) job.reject(error);
    for (const job of this.#queue) job.reject(error);
    this.#queue = [];
  }

  /** Runs every job of the group; without `isolated`, answers null at the first job that throws. */
  #runJobs(batch: QueuedJob[], isolated: boolean): GroupRun | null {
    const outcomes: Outcome[] = [];
    const messages: LiveBusMessage[] = [];
    for (const job of batch) {
      const jobMessages: LiveBusMessage[] = [];
      if (isolated) this.#savepoint.run();
      try {
        const value = job.run((m) => jobMessages.push(m));
        if (isolated) this.#release.run();
        outcomes.push({ ok: true, value });
        messages.push(...jobMessages);
      } catch (error) {
        if (!isolated) return null;
        this.#rollbackTo.run();
        this.#release.run();
        outcomes.push({ ok: false, error });
      }
    }
    return { outcomes, messages };
  }

  #isIdle(): boolean {
    return this.#queue.length === 0 && !this.#scheduled && this.#unsynced.length === 0 && !this.#syncing;
  }

  #notifyIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idle;
    this.#idle = [];
    for (const w of waiters) w();
  }
}
