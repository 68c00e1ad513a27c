import type { Migration } from '../migrations/migration-plan.js';

/**
 * The PostgreSQL schema as numbered migrations (see `../migrations/migration-plan.ts`), applied
 * by `postgres-migrate.ts` under an advisory lock. Never edit an applied entry: append a new one.
 *
 * Choices that keep the store's answers byte-identical to SQLite's:
 * - Times are ISO text (`2026-12-01T10:00:00.250Z`), written by the server's clock, never `now()`;
 *   except where only instances compare them, never answers: heartbeats and the outbox's times are
 *   the database's `now()` (`timestamptz`), one clock for every instance, however far apart theirs are.
 * - Event data is the JSON text as received (`text`, not `jsonb`, which would reorder keys).
 * - Text that is sorted or searched is `COLLATE "C"`: byte order and ASCII-only `lower()`, as in SQLite,
 *   whatever the database's default locale.
 * - `ord` columns stand for SQLite's rowid where a list is answered in insertion order.
 *
 * A thread's `head_seq` is the counter its seqs come from: bumped under the row's lock inside the
 * appending transaction, so seqs stay gapless with any number of writers on any number of instances.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'the whole schema of SQLite version 4, the outbox of cluster messages',
    sql: `
      CREATE TABLE principals (
        principal_id text COLLATE "C" PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('human', 'bot')),
        display_name text COLLATE "C",
        joinable_by text CHECK (joinable_by IN ('owners', 'anyone')),
        created_at text NOT NULL
      );
      CREATE TABLE principal_owners (
        principal_id text COLLATE "C" NOT NULL,
        owner_principal_id text COLLATE "C" NOT NULL,
        position integer NOT NULL,
        PRIMARY KEY (principal_id, owner_principal_id)
      );
      CREATE INDEX principal_owners_by_owner ON principal_owners (owner_principal_id);
      CREATE TABLE tokens (
        token_id text COLLATE "C" PRIMARY KEY,
        principal_id text COLLATE "C" NOT NULL,
        hash bytea NOT NULL UNIQUE,
        created_at text NOT NULL,
        revoked_at text,
        ord bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX tokens_by_principal ON tokens (principal_id);
      CREATE TABLE threads (
        thread_id text COLLATE "C" PRIMARY KEY,
        parent_thread_id text COLLATE "C",
        title text,
        created_by text COLLATE "C" NOT NULL,
        created_at text NOT NULL,
        head_seq bigint NOT NULL DEFAULT 0,
        create_key text COLLATE "C",
        ord bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX threads_by_parent ON threads (parent_thread_id);
      CREATE UNIQUE INDEX threads_by_key ON threads (created_by, coalesce(parent_thread_id, ''), create_key)
        WHERE create_key IS NOT NULL;
      CREATE TABLE grants (
        grant_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        thread_id text COLLATE "C" NOT NULL,
        principal_id text COLLATE "C" NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'member')),
        granted_by text COLLATE "C" NOT NULL,
        granted_at text NOT NULL,
        joined_seq bigint NOT NULL,
        revoked_at text
      );
      CREATE UNIQUE INDEX grants_live ON grants (thread_id, principal_id) WHERE revoked_at IS NULL;
      CREATE INDEX grants_live_by_principal ON grants (principal_id) WHERE revoked_at IS NULL;
      CREATE TABLE events (
        thread_id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        event_id text COLLATE "C" NOT NULL,
        type text COLLATE "C" NOT NULL,
        principal_id text COLLATE "C" NOT NULL,
        data text NOT NULL,
        client_event_id text COLLATE "C",
        created_at text NOT NULL,
        PRIMARY KEY (thread_id, seq)
      );
      CREATE UNIQUE INDEX events_idempotency ON events (thread_id, principal_id, client_event_id)
        WHERE client_event_id IS NOT NULL;
      CREATE TABLE runs (
        thread_id text COLLATE "C" NOT NULL,
        run_id text COLLATE "C" NOT NULL,
        principal_id text COLLATE "C" NOT NULL,
        started boolean NOT NULL,
        finished boolean NOT NULL,
        PRIMARY KEY (thread_id, run_id)
      );
      CREATE TABLE cursors (
        thread_id text COLLATE "C" NOT NULL,
        principal_id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        PRIMARY KEY (thread_id, principal_id)
      );
      CREATE TABLE artifacts (
        thread_id text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        version integer NOT NULL,
        media_type text NOT NULL,
        content text NOT NULL,
        size integer NOT NULL,
        updated_by text COLLATE "C" NOT NULL,
        updated_at text NOT NULL,
        PRIMARY KEY (thread_id, name, version)
      );
      CREATE TABLE oidc_subjects (
        issuer text COLLATE "C" NOT NULL,
        subject text COLLATE "C" NOT NULL,
        principal_id text COLLATE "C" NOT NULL UNIQUE,
        name_claim text,
        created_at text NOT NULL,
        jwts_not_before text,
        PRIMARY KEY (issuer, subject)
      );
      CREATE TABLE invites (
        invite_id text COLLATE "C" PRIMARY KEY,
        thread_id text COLLATE "C" NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'member')),
        created_by text COLLATE "C" NOT NULL,
        hash bytea NOT NULL UNIQUE,
        created_at text NOT NULL,
        expires_at text NOT NULL,
        max_uses integer NOT NULL,
        uses integer NOT NULL DEFAULT 0,
        revoked_at text,
        ord bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX invites_by_thread ON invites (thread_id);
      -- Written only under the cluster advisory lock (postgres-group-commit.ts), so ids commit in order
      -- and a reader that moved past an id never finds a smaller one later.
      CREATE TABLE token_revocations (
        seq bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        token_id text COLLATE "C",
        principal_id text COLLATE "C" NOT NULL,
        revoked_at text NOT NULL
      );
      -- Every live message other than events, for the other instances (cluster-feed.ts); same lock.
      -- json, not jsonb: the message reads back with its keys in the order it was written.
      CREATE TABLE outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        message json NOT NULL,
        created_at text NOT NULL
      );
    `,
  },
  {
    version: 2,
    description:
      'presence: the instances sharing the database with their heartbeats, and who holds a WebSocket on each',
    sql: `
      -- heartbeat_at is the database's now(), compared with now(): one clock for every instance.
      CREATE TABLE cluster_instances (
        instance_id text COLLATE "C" PRIMARY KEY,
        started_at text NOT NULL,
        heartbeat_at timestamptz NOT NULL
      );
      -- One row per principal with at least one authenticated WebSocket on that instance (socket
      -- counts stay in the instance's memory: a second socket writes nothing).
      CREATE TABLE presence (
        instance_id text COLLATE "C" NOT NULL,
        principal_id text COLLATE "C" NOT NULL,
        since text NOT NULL,
        PRIMARY KEY (instance_id, principal_id)
      );
    `,
  },
  {
    version: 3,
    description: "the outbox's times: the database's clock (timestamptz, now()), not the writing instance's",
    sql: `
      -- Pruned by age, and where a reader that fell behind re-checks from: by each instance's own
      -- clock, one running fast pruned entries before a reader got to them, and a reader running
      -- fast re-checked from after what it missed. The rows there are ISO text ending in Z: each
      -- reads as the same instant.
      ALTER TABLE outbox ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
        ALTER COLUMN created_at SET DEFAULT now();
    `,
  },
  {
    version: 4,
    description: 'pending invitations (consent), as SQLite version 5',
    sql: `
      -- ord stands for SQLite's rowid: invitations are listed, and dropped beyond the cap, oldest first.
      CREATE TABLE invitations (
        thread_id text COLLATE "C" NOT NULL,
        principal_id text COLLATE "C" NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'member')),
        invited_by text COLLATE "C" NOT NULL,
        created_at text NOT NULL,
        expires_at text NOT NULL,
        ord bigint GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (thread_id, principal_id)
      );
      CREATE INDEX invitations_by_principal ON invitations (principal_id, ord);
    `,
  },
];
