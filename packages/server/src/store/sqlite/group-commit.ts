import type { Database, Statement } from 'better-sqlite3';
import type { LiveBusMessage } from '../../live/live-bus.js';

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

interface Pending {
  run: WriteJob<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. Writes that arrive while the event loop is busy are queued and
 * committed together in one transaction (one fsync). A group first runs without
 * savepoints; if a job throws, the attempt is rolled back and the group runs
 * again with each job in its own savepoint, so that one job's failure rolls back
 * only that job (the first attempt's results and messages are dropped: nothing
 * of it was committed or published). Promises settle only after COMMIT; the
 * live messages of the committed jobs are handed to `onCommit` right after
 * COMMIT, in job order, before any promise settles.
 */
export class GroupCommit {
  #queue: Pending[] = [];
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

  constructor(db: Database, onCommit: (messages: LiveBusMessage[]) => void) {
    this.#db = db;
    this.#onCommit = onCommit;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT job');
    this.#release = db.prepare('RELEASE job');
    this.#rollbackTo = db.prepare('ROLLBACK TO job');
  }

  enqueue<T>(run: WriteJob<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /** Resolves once nothing is queued. */
  drained(): Promise<void> {
    if (this.#queue.length === 0 && !this.#scheduled) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    this.#queue = [];
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

  #commitGroup(batch: Pending[]): void {
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
    if (ran.messages.length > 0) this.#onCommit(ran.messages);
    batch.forEach((job, i) => {
      const outcome = ran.outcomes[i];
      if (outcome?.ok) job.resolve(outcome.value);
      else job.reject(outcome?.error);
    });
  }

  /** Runs every job of the group; without `isolated`, answers null at the first job that throws. */
  #runJobs(batch: Pending[], isolated: boolean): GroupRun | null {
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

  #notifyIdle(): void {
    if (this.#queue.length > 0 || this.#scheduled) return;
    const waiters = this.#idle;
    this.#idle = [];
    for (const w of waiters) w();
  }
}
