import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Where a bot records, per thread, the last seq its handler settled (finished with). This, not
 * the server's consumer cursor, is the recovery point after a restart. `settle` only moves
 * forward. A store that has lost its data answers `null`, and the runtime falls back to its
 * `onFirstJoin` policy.
 */
export interface CheckpointStore {
  /** The last settled seq of the thread, or null when none is recorded. */
  get(threadId: string): Promise<number | null>;
  /** Records `seq` as settled; a seq at or below the recorded one is ignored. */
  settle(threadId: string, seq: number): Promise<void>;
  /** Forgets the thread (e.g. when the bot's grant is revoked). */
  delete(threadId: string): Promise<void>;
  close(): Promise<void>;
}

function checkSeq(seq: number): void {
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw new RangeError(`a checkpoint seq must be a non-negative integer, got ${String(seq)}`);
}

/** A checkpoint store in memory: lost with the process, so a restart falls back to `onFirstJoin`. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #seqs = new Map<string, number>();

  async get(threadId: string): Promise<number | null> {
    return this.#seqs.get(threadId) ?? null;
  }

  async settle(threadId: string, seq: number): Promise<void> {
    checkSeq(seq);
    const current = this.#seqs.get(threadId);
    if (current === undefined || seq > current) this.#seqs.set(threadId, seq);
  }

  async delete(threadId: string): Promise<void> {
    this.#seqs.delete(threadId);
  }

  async close(): Promise<void> {}
}

export interface SqliteCheckpointStoreOptions {
  /** The database file; its folder is created if missing. `:memory:` works too (for tests only). */
  readonly path: string;
  /**
   * Keeps several bots' checkpoints apart in one file: rows are keyed by (scope, threadId).
   * Usually the bot's principal id. Default `''`.
   */
  readonly scope?: string;
}

/**
 * A durable checkpoint store on SQLite (WAL, `synchronous = FULL`: a settled seq survives a
 * crash of the process or of the machine once `settle` has returned).
 */
export class SqliteCheckpointStore implements CheckpointStore {
  readonly #db: Database.Database;
  readonly #scope: string;
  readonly #getStatement: Database.Statement<[string, string], { seq: number }>;
  readonly #settleStatement: Database.Statement<[string, string, number, string]>;
  readonly #deleteStatement: Database.Statement<[string, string]>;

  constructor(options: SqliteCheckpointStoreOptions) {
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    this.#scope = options.scope ?? '';
    this.#db = new Database(options.path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS bubble_checkpoints (
        scope      TEXT    NOT NULL,
        thread_id  TEXT    NOT NULL,
        seq        INTEGER NOT NULL,
        updated_at TEXT    NOT NULL,
        PRIMARY KEY (scope, thread_id)
      ) STRICT
    `);
    this.#getStatement = this.#db.prepare('SELECT seq FROM bubble_checkpoints WHERE scope = ? AND thread_id = ?');
    this.#settleStatement = this.#db.prepare(`
      INSERT INTO bubble_checkpoints (scope, thread_id, seq, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (scope, thread_id) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at
      WHERE excluded.seq > bubble_checkpoints.seq
    `);
    this.#deleteStatement = this.#db.prepare('DELETE FROM bubble_checkpoints WHERE scope = ? AND thread_id = ?');
  }

  async get(threadId: string): Promise<number | null> {
    return this.#getStatement.get(this.#scope, threadId)?.seq ?? null;
  }

  async settle(threadId: string, seq: number): Promise<void> {
    checkSeq(seq);
    this.#settleStatement.run(this.#scope, threadId, seq, new Date().toISOString());
  }

  async delete(threadId: string): Promise<void> {
    this.#deleteStatement.run(this.#scope, threadId);
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}
