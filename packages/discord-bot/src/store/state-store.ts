import { makePrivateDatabase } from '@bubble/engine';
import Database from 'better-sqlite3';
import { DiscordBotError } from '../errors.js';

export type ThreadMode = 'chat' | 'agentic';
export type TokenKind = 'claude' | 'github';

/** One Discord thread's Claude session (seed 004: `thread_sessions`). */
export interface ThreadSession {
  threadId: string;
  /** Stored only once the transcript exists (resume by exact id); null before the first answered turn or after /reset. */
  sessionId: string | null;
  /** `workspaceRoot/<threadId>`, written once: the transcript folder depends on it. */
  cwd: string;
  mode: ThreadMode;
  /** `/model` for this thread; null: the configured model. */
  model: string | null;
  createdBy: string;
  guildId: string | null;
  createdAt: number;
}

export interface SealedToken {
  sealed: string;
  keyId: string;
}

const SCHEMA_VERSION = 2;

const MIGRATIONS: Record<number, string> = {
  1: `
    CREATE TABLE thread_sessions (
      thread_id TEXT PRIMARY KEY,
      session_id TEXT,
      cwd TEXT NOT NULL,
      mode TEXT NOT NULL CHECK (mode IN ('chat', 'agentic')),
      model TEXT,
      created_by TEXT NOT NULL,
      guild_id TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE TABLE linked_tokens (
      user_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('claude', 'github')),
      sealed TEXT NOT NULL,
      key_id TEXT NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, kind)
    );
    CREATE TABLE thread_tool_grants (
      thread_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      granted_at INTEGER NOT NULL,
      PRIMARY KEY (thread_id, user_id, tool)
    );
  `,
  2: `
    CREATE TABLE workspace_seen (
      thread_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      snapshot BLOB NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (thread_id, user_id)
    );
  `,
};

/**
 * The bot's state in one SQLite file: thread sessions, sealed tokens and the
 * tool grants remembered per thread. Synchronous (better-sqlite3): every call
 * is one small indexed statement.
 */
export class StateStore {
  readonly #db: Database.Database;
  readonly #now: () => number;

  private constructor(db: Database.Database, now: () => number) {
    this.#db = db;
    this.#now = now;
  }

  static open(path: string, options: { now?: () => number } = {}): StateStore {
    let db: Database.Database;
    try {
      makePrivateDatabase(path);
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
    } catch (error) {
      throw new DiscordBotError(
        'store_unusable',
        `the state database ${path} cannot be opened: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      db.close();
      throw new DiscordBotError(
        'store_unusable',
        `the state database ${path} has schema ${version}, newer than this bubble-discord (${SCHEMA_VERSION})`,
      );
    }
    for (let next = version + 1; next <= SCHEMA_VERSION; next++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[next]!);
        db.pragma(`user_version = ${next}`);
      })();
    }
    return new StateStore(db, options.now ?? Date.now);
  }

  thread(threadId: string): ThreadSession | undefined {
    const row = this.#db.prepare('SELECT * FROM thread_sessions WHERE thread_id = ?').get(threadId) as Row | undefined;
    return row === undefined ? undefined : toSession(row);
  }

  /** Records a thread the bot started. Its cwd is fixed here, once; a second call keeps the first row. */
  createThread(input: {
    threadId: string;
    cwd: string;
    mode: ThreadMode;
    createdBy: string;
    guildId: string | null;
  }): ThreadSession {
    const now = this.#now();
    this.#db
      .prepare(
        `INSERT INTO thread_sessions (thread_id, session_id, cwd, mode, model, created_by, guild_id, created_at, updated_at)
         VALUES (?, NULL, ?, ?, NULL, ?, ?, ?, ?) ON CONFLICT (thread_id) DO NOTHING`,
      )
      .run(input.threadId, input.cwd, input.mode, input.createdBy, input.guildId, now, now);
    return this.thread(input.threadId)!;
  }

  setSessionId(threadId: string, sessionId: string | null): void {
    this.#db
      .prepare('UPDATE thread_sessions SET session_id = ?, updated_at = ? WHERE thread_id = ?')
      .run(sessionId, this.#now(), threadId);
  }

  setMode(threadId: string, mode: ThreadMode): void {
    this.#db
      .prepare('UPDATE thread_sessions SET mode = ?, updated_at = ? WHERE thread_id = ?')
      .run(mode, this.#now(), threadId);
  }

  setModel(threadId: string, model: string | null): void {
    this.#db
      .prepare('UPDATE thread_sessions SET model = ?, updated_at = ? WHERE thread_id = ?')
      .run(model, this.#now(), threadId);
  }

  sealedToken(userId: string, kind: TokenKind): SealedToken | undefined {
    const row = this.#db
      .prepare('SELECT sealed, key_id FROM linked_tokens WHERE user_id = ? AND kind = ?')
      .get(userId, kind) as { sealed: string; key_id: string } | undefined;
    return row === undefined ? undefined : { sealed: row.sealed, keyId: row.key_id };
  }

  putSealedToken(userId: string, kind: TokenKind, token: SealedToken): void {
    this.#db
      .prepare(
        `INSERT INTO linked_tokens (user_id, kind, sealed, key_id, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (user_id, kind) DO UPDATE SET sealed = excluded.sealed, key_id = excluded.key_id, updated_at = excluded.updated_at`,
      )
      .run(userId, kind, token.sealed, token.keyId, this.#now());
  }

  /** Removes the user's tokens (both kinds) and their remembered tool grants; returns how many tokens went. */
  deleteTokens(userId: string): number {
    return this.#db.transaction(() => {
      this.#db.prepare('DELETE FROM thread_tool_grants WHERE user_id = ?').run(userId);
      return this.#db.prepare('DELETE FROM linked_tokens WHERE user_id = ?').run(userId).changes;
    })();
  }

  /** Every token not sealed under `keyId`, for re-sealing after a key rotation. */
  tokensNotSealedWith(keyId: string): Array<{ userId: string; kind: TokenKind } & SealedToken> {
    return (
      this.#db
        .prepare('SELECT user_id, kind, sealed, key_id FROM linked_tokens WHERE key_id <> ? ORDER BY user_id, kind')
        .all(keyId) as Array<{ user_id: string; kind: TokenKind; sealed: string; key_id: string }>
    ).map((row) => ({ userId: row.user_id, kind: row.kind, sealed: row.sealed, keyId: row.key_id }));
  }

  /** Replaces a sealed token only if it is still `previous` (a /link or /unlink in between wins); whether it did. */
  replaceSealedToken(userId: string, kind: TokenKind, previous: string, next: SealedToken): boolean {
    return (
      this.#db
        .prepare(
          'UPDATE linked_tokens SET sealed = ?, key_id = ?, updated_at = ? WHERE user_id = ? AND kind = ? AND sealed = ?',
        )
        .run(next.sealed, next.keyId, this.#now(), userId, kind, previous).changes === 1
    );
  }

  /** The workspace as `userId` last left or accepted it in this thread (a serialized snapshot); undefined: never. */
  seenWorkspace(threadId: string, userId: string): Buffer | undefined {
    const row = this.#db
      .prepare('SELECT snapshot FROM workspace_seen WHERE thread_id = ? AND user_id = ?')
      .get(threadId, userId) as { snapshot: Buffer } | undefined;
    return row?.snapshot;
  }

  setSeenWorkspace(threadId: string, userId: string, snapshot: Buffer): void {
    this.#db
      .prepare(
        `INSERT INTO workspace_seen (thread_id, user_id, snapshot, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (thread_id, user_id) DO UPDATE SET snapshot = excluded.snapshot, updated_at = excluded.updated_at`,
      )
      .run(threadId, userId, snapshot, this.#now());
  }

  grantTool(threadId: string, userId: string, tool: string): void {
    this.#db
      .prepare(
        'INSERT INTO thread_tool_grants (thread_id, user_id, tool, granted_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .run(threadId, userId, tool, this.#now());
  }

  isToolGranted(threadId: string, userId: string, tool: string): boolean {
    return (
      this.#db
        .prepare('SELECT 1 FROM thread_tool_grants WHERE thread_id = ? AND user_id = ? AND tool = ?')
        .get(threadId, userId, tool) !== undefined
    );
  }

  /** /reset: the session goes, the remembered grants go; the row (and its fixed cwd) stays. */
  resetThread(threadId: string): void {
    this.#db.transaction(() => {
      this.#db
        .prepare('UPDATE thread_sessions SET session_id = NULL, updated_at = ? WHERE thread_id = ?')
        .run(this.#now(), threadId);
      this.#db.prepare('DELETE FROM thread_tool_grants WHERE thread_id = ?').run(threadId);
    })();
  }

  close(): void {
    this.#db.close();
  }
}

interface Row {
  thread_id: string;
  session_id: string | null;
  cwd: string;
  mode: ThreadMode;
  model: string | null;
  created_by: string;
  guild_id: string | null;
  created_at: number;
}

function toSession(row: Row): ThreadSession {
  return {
    threadId: row.thread_id,
    sessionId: row.session_id,
    cwd: row.cwd,
    mode: row.mode,
    model: row.model,
    createdBy: row.created_by,
    guildId: row.guild_id,
    createdAt: row.created_at,
  };
}
