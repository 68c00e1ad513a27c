import { CLUSTER_CHANNEL, type ClusterHint } from '../cluster-feed.js';
import { preparedName, type Statement } from './postgres-pipeline.js';
import type { GroupState } from './postgres-write-tx.js';

/**
 * The advisory lock that orders the writers of the two logs other processes read by id (token
 * revocations, the outbox): held from the insert to the commit, so ids commit in id order and a
 * reader that moved past an id never finds a smaller one later. Taken last in a group, after the
 * thread locks, so it never waits while holding anything another writer of it waits for.
 */
const LOG_LOCK_KEY = 7_352_114_001;

/** Every thread a group declared, locked in one statement in thread id order: groups of several instances cannot deadlock. */
export const LOCK_THREADS_SQL =
  'SELECT thread_id, head_seq FROM threads WHERE thread_id = ANY($1::text[]) ORDER BY thread_id FOR UPDATE';

/**
 * The group transaction's id, sent with BEGIN (so it costs no round trip). Taking it assigns the
 * transaction an id at once, which a group that writes gets anyway. `pg_current_xact_id` and
 * `pg_xact_status` of an `xid8` are PostgreSQL 13's.
 */
export const CURRENT_XID_SQL = 'SELECT pg_current_xact_id()::text AS xid';

/**
 * Whether a transaction committed: `committed`, `aborted`, `in progress`, or null once too old to
 * tell; with the server's start time, since a server that restarted may give an id out again.
 */
export const XACT_STATUS_SQL = 'SELECT pg_xact_status($1::xid8) AS status, pg_postmaster_start_time()::text AS started';

/** Who a writer's connection is: read once per connection, for `XACT_STATUS_SQL` and `TERMINATE_SESSION_SQL`. */
export const SESSION_SQL = `SELECT pid, backend_start::text AS "backendStart", pg_postmaster_start_time()::text AS started
  FROM pg_stat_activity WHERE pid = pg_backend_pid()`;

/** Ends that session, and no other that has taken its pid since. */
export const TERMINATE_SESSION_SQL = `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
  WHERE pid = $1 AND backend_start::text = $2`;

/** PostgreSQL refuses a notification payload of 8,000 bytes or more; leave room. */
const MAX_HINT_BYTES = 7_500;

/** What a group sends to commit, built from what its jobs staged. */
export interface Closing {
  /** Sent with COMMIT when `logs` is empty; else first, with `logs`. */
  writes: Statement[];
  /** Log entries and outbox messages under the log lock; the outbox insert, if any, is last and answers the ids. */
  logs: Statement[];
  /** Whether the last of `logs` is the outbox insert, answering the new ids. */
  answersOutbox: boolean;
  /** The new head of every thread the group appended to. */
  heads: Map<string, number>;
}

/**
 * The statements that write what a group staged. The common commit (events, heads, runs, no log
 * entry) is one statement: its writes as data-modifying CTEs, the notification as its SELECT, so it
 * goes with COMMIT in one round trip. With log entries or outbox messages those follow under the
 * log lock, and the notification, which names the newest outbox id, is sent with COMMIT once the
 * ids are known (`notifyStatement`).
 */
export function closingStatements(group: GroupState): Closing {
  const params: unknown[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const ctes: string[] = [];
  const heads = new Map<string, number>();
  if (group.events.length > 0) {
    const columns: unknown[][] = [[], [], [], [], [], [], [], []];
    for (const { envelope: e, dataJson } of group.events) {
      const values = [e.threadId, e.seq, e.id, e.type, e.principalId, dataJson, e.clientEventId, e.createdAt];
      for (const [i, value] of values.entries()) columns[i]!.push(value);
      heads.set(e.threadId, e.seq);
    }
    const types = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text'];
    ctes.push(
      `new_events AS (INSERT INTO events (thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at)
         SELECT * FROM unnest(${columns.map((c, i) => `${param(c)}::${types[i]}[]`).join(', ')}))`,
      `new_heads AS (UPDATE threads t SET head_seq = v.head
         FROM unnest(${param([...heads.keys()])}::text[], ${param([...heads.values()])}::bigint[]) AS v(thread_id, head)
         WHERE t.thread_id = v.thread_id)`,
    );
  }
  if (group.runs.size > 0) {
    const runs = [...group.runs.values()];
    ctes.push(`new_runs AS (INSERT INTO runs (thread_id, run_id, principal_id, started, finished)
      SELECT * FROM unnest(${param(runs.map((r) => r.threadId))}::text[], ${param(runs.map((r) => r.runId))}::text[],
        ${param(runs.map((r) => r.state.ownerPrincipalId))}::text[], ${param(runs.map((r) => r.state.started))}::boolean[],
        ${param(runs.map((r) => r.state.finished))}::boolean[])
      ON CONFLICT (thread_id, run_id) DO UPDATE SET started = excluded.started, finished = excluded.finished)`);
  }
  const outgoing = group.messages.filter((m) => m.kind !== 'events');
  const logged = group.revocations.length > 0 || outgoing.length > 0;
  const notifyHere = !logged && heads.size > 0;
  const select = notifyHere
    ? `SELECT pg_notify(${param(CLUSTER_CHANNEL)}, ${param(clusterHintPayload(heads, undefined))})`
    : 'SELECT 1';
  const writes: Statement[] = [];
  if (ctes.length > 0 || notifyHere) {
    const sql = ctes.length > 0 ? `WITH ${ctes.join(',\n')} ${select}` : select;
    writes.push({ sql, params, name: preparedName(sql) });
  }
  const logs: Statement[] = [];
  if (!logged) return { writes, logs, answersOutbox: false, heads };
  logs.push({ sql: 'SELECT pg_advisory_xact_lock($1)', params: [LOG_LOCK_KEY] });
  if (group.revocations.length > 0) {
    const r = group.revocations;
    logs.push({
      sql: `INSERT INTO token_revocations (token_id, principal_id, revoked_at)
       SELECT t, p, at FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(t, p, at, n) ORDER BY n`,
      params: [r.map((x) => x.tokenId), r.map((x) => x.principalId), r.map((x) => x.revokedAt)],
    });
  }
  if (outgoing.length > 0) {
    // created_at is the database's now() (its default): pruning and re-checks go by one clock.
    logs.push({
      sql: `INSERT INTO outbox (message)
       SELECT m FROM unnest($1::json[]) WITH ORDINALITY AS r(m, n) ORDER BY n RETURNING id`,
      params: [outgoing.map((m) => JSON.stringify(m))],
    });
  }
  return { writes, logs, answersOutbox: outgoing.length > 0, heads };
}

/** The notification of a commit with log entries, once its outbox ids (if any) are known. */
export function notifyStatement(heads: ReadonlyMap<string, number>, outbox: number | undefined): Statement {
  return { sql: 'SELECT pg_notify($1, $2)', params: [CLUSTER_CHANNEL, clusterHintPayload(heads, outbox)] };
}

/** The JSON of one commit's {@link ClusterHint}, or its overflow form when the heads would not fit. */
export function clusterHintPayload(heads: ReadonlyMap<string, number>, outbox: number | undefined): string {
  const withOutbox = (hint: ClusterHint): ClusterHint => (outbox === undefined ? hint : { ...hint, outbox });
  const full = JSON.stringify(withOutbox({ heads: [...heads].map(([threadId, headSeq]) => ({ threadId, headSeq })) }));
  if (Buffer.byteLength(full, 'utf8') <= MAX_HINT_BYTES) return full;
  return JSON.stringify(withOutbox({ heads: [], overflow: true }));
}
