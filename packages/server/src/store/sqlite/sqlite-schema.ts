import type { Database } from 'better-sqlite3';
import { latestVersion, pendingMigrations, type Migration } from '../migrations/migration-plan.js';

/**
 * The SQLite schema as numbered migrations (see `../migrations/migration-plan.ts`). Each entry
 * runs once, inside a transaction, and is recorded in `schema_migrations`; never edit an applied
 * entry, append a new one.
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'principals, tokens, threads, grants, events, runs, cursors, artifacts',
    sql: `
      CREATE TABLE principals (
        principal_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('human', 'bot')),
        display_name TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE principal_owners (
        principal_id TEXT NOT NULL,
        owner_principal_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        PRIMARY KEY (principal_id, owner_principal_id)
      );
      CREATE INDEX principal_owners_by_owner ON principal_owners (owner_principal_id);
      CREATE TABLE tokens (
        token_id TEXT PRIMARY KEY,
        principal_id TEXT NOT NULL,
        hash BLOB NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX tokens_by_principal ON tokens (principal_id);
      CREATE TABLE threads (
        thread_id TEXT PRIMARY KEY,
        parent_thread_id TEXT,
        title TEXT,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        head_seq INTEGER NOT NULL DEFAULT 0,
        create_key TEXT
      );
      CREATE INDEX threads_by_parent ON threads (parent_thread_id);
      CREATE UNIQUE INDEX threads_by_key ON threads (created_by, coalesce(parent_thread_id, ''), create_key)
        WHERE create_key IS NOT NULL;
      CREATE TABLE grants (
        grant_id INTEGER PRIMARY KEY,
        thread_id TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        granted_by TEXT NOT NULL,
        granted_at TEXT NOT NULL,
        joined_seq INTEGER NOT NULL,
        revoked_at TEXT
      );
      CREATE UNIQUE INDEX grants_live ON grants (thread_id, principal_id) WHERE revoked_at IS NULL;
      CREATE INDEX grants_live_by_principal ON grants (principal_id) WHERE revoked_at IS NULL;
      CREATE TABLE events (
        thread_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        data TEXT NOT NULL,
        client_event_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (thread_id, seq)
      );
      CREATE UNIQUE INDEX events_idempotency ON events (thread_id, principal_id, client_event_id)
        WHERE client_event_id IS NOT NULL;
      CREATE TABLE runs (
        thread_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        started INTEGER NOT NULL,
        finished INTEGER NOT NULL,
        PRIMARY KEY (thread_id, run_id)
      ) WITHOUT ROWID;
      CREATE TABLE cursors (
        thread_id TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (thread_id, principal_id)
      ) WITHOUT ROWID;
      CREATE TABLE artifacts (
        thread_id TEXT NOT NULL,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        media_type TEXT NOT NULL,
        content TEXT NOT NULL,
        size INTEGER NOT NULL,
        updated_by TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (thread_id, name, version)
      );
    `,
  },
  {
    // Bots say who may put them on a thread (protocol.md, Principals); every bot from before is "owners".
    version: 2,
    description: 'bots say who may put them on a thread (joinable_by)',
    sql: `
      ALTER TABLE principals ADD COLUMN joinable_by TEXT CHECK (joinable_by IN ('owners', 'anyone'));
      UPDATE principals SET joinable_by = 'owners' WHERE kind = 'bot';
    `,
  },
  {
    // Sign-in with an identity provider, invites, and a log of token revocations that another
    // process (the operator CLI) can append to while the server runs (protocol.md, Authentication).
    version: 3,
    description: 'OIDC subjects, invites, the token revocation log',
    sql: `
      CREATE TABLE oidc_subjects (
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        principal_id TEXT NOT NULL UNIQUE,
        name_claim TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (issuer, subject)
      );
      CREATE TABLE invites (
        invite_id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        created_by TEXT NOT NULL,
        hash BLOB NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        max_uses INTEGER NOT NULL,
        uses INTEGER NOT NULL DEFAULT 0,
        revoked_at TEXT
      );
      CREATE INDEX invites_by_thread ON invites (thread_id);
      CREATE TABLE token_revocations (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        token_id TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        revoked_at TEXT NOT NULL
      );
    `,
  },
  {
    // The operator ends a person's JWTs too (principal revoke-tokens): a subject remembers the
    // time before which its JWTs are refused, and the revocation log carries that as an entry with
    // no token id (the table is rebuilt to allow it, keeping every seq, so watchers' cursors hold).
    version: 4,
    description: 'the end of JWTs in the revocation log (jwts_not_before)',
    sql: `
      ALTER TABLE oidc_subjects ADD COLUMN jwts_not_before TEXT;
      CREATE TABLE token_revocations_v4 (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        token_id TEXT,
        principal_id TEXT NOT NULL,
        revoked_at TEXT NOT NULL
      );
      INSERT INTO token_revocations_v4 (seq, token_id, principal_id, revoked_at)
        SELECT seq, token_id, principal_id, revoked_at FROM token_revocations;
      DROP TABLE token_revocations;
      ALTER TABLE token_revocations_v4 RENAME TO token_revocations;
    `,
  },
  {
    // Consent (protocol.md, Threads and grants): a person added by someone who cannot see them gets
    // a pending invitation, one per thread, which they accept or decline. Listed in insertion order
    // (rowid): a renewed invitation is deleted and inserted again, so the oldest drop first.
    version: 5,
    description: 'pending invitations (consent)',
    sql: `
      CREATE TABLE invitations (
        thread_id TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        invited_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (thread_id, principal_id)
      );
      CREATE INDEX invitations_by_principal ON invitations (principal_id);
    `,
  },
];

export const SCHEMA_VERSION = latestVersion(SQLITE_MIGRATIONS);

/**
 * WAL, durable commits (synchronous=FULL; the store then makes its own commits durable off the
 * event loop, `sqlite-wal-sync.ts`), then any pending migrations; returns the versions applied now.
 * Two processes opening one file at once (the server and the operator's CLI) are kept apart by
 * BEGIN IMMEDIATE: the second waits (busy_timeout), then re-reads what is applied and skips it.
 */
export function prepareDatabase(db: Database): number[] {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const appliedNow: number[] = [];
  const readApplied = () =>
    (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version);
  for (const migration of pendingMigrations(SQLITE_MIGRATIONS, readApplied())) {
    db.transaction(() => {
      if (readApplied().includes(migration.version)) return;
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        migration.version,
        new Date().toISOString(),
      );
      appliedNow.push(migration.version);
    }).immediate();
  }
  return appliedNow;
}
