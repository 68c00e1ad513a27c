import Database from 'better-sqlite3';
import { makePrivateDatabase } from '@bubble/engine';

/** What the bot remembers per thread across restarts (seed 004: "the cwd is written once and never recomputed"). */
export interface ThreadSessionRecord {
  threadId: string;
  /** The thread's workspace, fixed the first time the thread gets a query. */
  workspace: string;
  /** The Claude session id, stored only once a transcript exists (after the first result). */
  claudeSessionId: string | null;
}

export interface SessionStore {
  get(threadId: string): ThreadSessionRecord | undefined;
  /** Fixes the workspace of a thread; a second call keeps the first value and returns it. */
  fixWorkspace(threadId: string, workspace: string): ThreadSessionRecord;
  setClaudeSession(threadId: string, claudeSessionId: string | null): void;
  /** A subthread whose sub-agent ended: the bot no longer follows it, across restarts too. */
  markReleased(threadId: string): void;
  isReleased(threadId: string): boolean;
  /**
   * Whether the thread had a session in memory when the bot last ran (it may have left runs
   * open); `setAwake` records it as sessions are made and dropped.
   */
  wasAwake(threadId: string): boolean;
  setAwake(threadId: string, awake: boolean): void;
  close(): void;
}

/**
 * The per-thread session table, in the same SQLite file as the sdk's
 * settlement checkpoints (a separate table), keyed by the bot's principal.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #db: Database.Database;
  readonly #scope: string;
  readonly #statements: ReturnType<typeof prepareStatements>;

  constructor(options: { path: string; scope: string }) {
    makePrivateDatabase(options.path);
    this.#scope = options.scope;
    this.#db = new Database(options.path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(`CREATE TABLE IF NOT EXISTS scuba_thread_sessions (
      scope TEXT NOT NULL,
      thread_id TEXT NOT NULL,
      workspace TEXT NOT NULL,
      claude_session_id TEXT,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (scope, thread_id)
    )`);
    this.#db.exec(`CREATE TABLE IF NOT EXISTS scuba_released_threads (
      scope TEXT NOT NULL,
      thread_id TEXT NOT NULL,
      released_at TEXT NOT NULL,
      PRIMARY KEY (scope, thread_id)
    )`);
    const upgrading =
      this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'scuba_awake_threads'").get() ===
      undefined;
    this.#db.exec(`CREATE TABLE IF NOT EXISTS scuba_awake_threads (
      scope TEXT NOT NULL,
      thread_id TEXT NOT NULL,
      PRIMARY KEY (scope, thread_id)
    )`);
    // A store from before sessions slept: every thread it knows of may have a run left open (one
    // whose first turn never got a CLI has a checkpoint, in the sdk's table in the same file, but no session row).
    if (upgrading) {
      this.#db.exec(
        'INSERT OR IGNORE INTO scuba_awake_threads (scope, thread_id) SELECT scope, thread_id FROM scuba_thread_sessions',
      );
      const checkpoints = this.#db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'bubble_checkpoints'")
        .get();
      if (checkpoints !== undefined)
        this.#db
          .prepare(
            'INSERT OR IGNORE INTO scuba_awake_threads (scope, thread_id) SELECT scope, thread_id FROM bubble_checkpoints WHERE scope = ?',
          )
          .run(this.#scope);
    }
    this.#statements = prepareStatements(this.#db);
  }

  wasAwake(threadId: string): boolean {
    return this.#statements.isAwake.get(this.#scope, threadId) !== undefined;
  }

  setAwake(threadId: string, awake: boolean): void {
    (awake ? this.#statements.wake : this.#statements.sleep).run(this.#scope, threadId);
  }

  markReleased(threadId: string): void {
    this.#db
      .prepare(
        'INSERT INTO scuba_released_threads (scope, thread_id, released_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .run(this.#scope, threadId, new Date().toISOString());
  }

  isReleased(threadId: string): boolean {
    return this.#statements.isReleased.get(this.#scope, threadId) !== undefined;
  }

  get(threadId: string): ThreadSessionRecord | undefined {
    const row = this.#statements.session.get(this.#scope, threadId);
    return row && { threadId, workspace: row.workspace, claudeSessionId: row.claude_session_id };
  }

  fixWorkspace(threadId: string, workspace: string): ThreadSessionRecord {
    this.#db
      .prepare(
        'INSERT INTO scuba_thread_sessions (scope, thread_id, workspace, claude_session_id, updated_at) VALUES (?, ?, ?, NULL, ?) ON CONFLICT DO NOTHING',
      )
      .run(this.#scope, threadId, workspace, new Date().toISOString());
    return this.get(threadId)!;
  }

  setClaudeSession(threadId: string, claudeSessionId: string | null): void {
    this.#db
      .prepare(
        'UPDATE scuba_thread_sessions SET claude_session_id = ?, updated_at = ? WHERE scope = ? AND thread_id = ?',
      )
      .run(claudeSessionId, new Date().toISOString(), this.#scope, threadId);
  }

  close(): void {
    this.#db.close();
  }
}

/** The statements asked once per thread at boot, prepared once. */
function prepareStatements(db: Database.Database) {
  return {
    isReleased: db.prepare<[string, string]>('SELECT 1 FROM scuba_released_threads WHERE scope = ? AND thread_id = ?'),
    isAwake: db.prepare<[string, string]>('SELECT 1 FROM scuba_awake_threads WHERE scope = ? AND thread_id = ?'),
    wake: db.prepare<[string, string]>('INSERT OR IGNORE INTO scuba_awake_threads (scope, thread_id) VALUES (?, ?)'),
    sleep: db.prepare<[string, string]>('DELETE FROM scuba_awake_threads WHERE scope = ? AND thread_id = ?'),
    session: db.prepare<[string, string], { workspace: string; claude_session_id: string | null }>(
      'SELECT workspace, claude_session_id FROM scuba_thread_sessions WHERE scope = ? AND thread_id = ?',
    ),
  };
}
