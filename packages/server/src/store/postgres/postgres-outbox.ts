import type { ClusterFeed, OutboxEntry } from '../cluster-feed.js';
import { type GrantRow, toGrant } from '../sqlite/sqlite-rows.js';
import type { PostgresStoreContext } from './postgres-context.js';
import { GRANT_COLUMNS, SQL } from './postgres-sql.js';

type OutboxMethods = Pick<
  ClusterFeed,
  'outboxHead' | 'databaseNow' | 'readOutboxAfter' | 'outboxTail' | 'pruneOutbox' | 'recentChanges'
>;

/** Taken (if free) by the statement that prunes, so the instances prune one at a time. */
const PRUNE_LOCK_KEY = 7_352_114_002;

/**
 * The oldest `$2` entries, cut at the first one written less than `$1` ms ago (by the database's
 * clock, as `created_at`: the instances' own never matter), so what goes is always a prefix of the
 * outbox in id order; never the newest entry, so `outboxHead` stays right when everything is old.
 * Skipped, deleting nothing, while another instance's prune holds the lock.
 */
const PRUNE_SQL = `WITH pruner AS (SELECT pg_try_advisory_xact_lock($3) AS ok),
  oldest AS (SELECT id, created_at FROM outbox WHERE (SELECT ok FROM pruner) ORDER BY id LIMIT $2),
  doomed AS (SELECT id FROM oldest
    WHERE id < coalesce((SELECT min(id) FROM oldest
        WHERE created_at >= now() - $1::float8 * interval '1 millisecond'), 9223372036854775807)
      AND id < (SELECT max(id) FROM outbox)),
  gone AS (DELETE FROM outbox WHERE id IN (SELECT id FROM doomed) RETURNING 1)
  SELECT count(*)::int AS n FROM gone`;

const TOKENS_REVOKED_SINCE = `SELECT principal_id, json_agg(token_id ORDER BY ord) AS token_ids, max(revoked_at) AS at
  FROM tokens WHERE revoked_at COLLATE "C" >= $1 GROUP BY principal_id`;
const JWTS_REVOKED_SINCE = `SELECT principal_id, jwts_not_before FROM oidc_subjects
  WHERE jwts_not_before COLLATE "C" >= $1`;
const GRANTS_CHANGED_SINCE = `SELECT ${GRANT_COLUMNS} FROM grants
  WHERE granted_at COLLATE "C" >= $1 OR revoked_at COLLATE "C" >= $1 ORDER BY grant_id`;

type Message = OutboxEntry['message'];

/**
 * The outbox other instances read (`cluster-feed.ts`), its pruning, and what a reader that fell
 * behind the pruning re-checks instead.
 */
export function outboxMethods({ db }: PostgresStoreContext): OutboxMethods {
  return {
    outboxHead: async () => (await db.query<{ id: number }>(SQL.outboxHead))[0]!.id,
    databaseNow: async () => (await db.query<{ now: Date }>(SQL.databaseNow))[0]!.now.toISOString(),
    outboxTail: async () => (await db.query<{ id: number }>(SQL.outboxTail))[0]!.id,
    readOutboxAfter: async (cursor, limit) =>
      (await db.query<{ id: number; message: Message; created_at: Date }>(SQL.outboxAfter, [cursor, limit])).map(
        (row) => ({ id: row.id, message: row.message, createdAt: row.created_at.toISOString() }),
      ),

    pruneOutbox: async (olderThanMs, limit) =>
      (await db.query<{ n: number }>(PRUNE_SQL, [olderThanMs, limit, PRUNE_LOCK_KEY]))[0]!.n,

    // Three reads of tables without an index on these times: a scan each, only for an instance that fell behind.
    recentChanges: async (sinceIso) => {
      const [tokens, jwts, grants] = await Promise.all([
        db.query<{ principal_id: string; token_ids: string[]; at: string }>(TOKENS_REVOKED_SINCE, [sinceIso]),
        db.query<{ principal_id: string; jwts_not_before: string }>(JWTS_REVOKED_SINCE, [sinceIso]),
        db.query<GrantRow>(GRANTS_CHANGED_SINCE, [sinceIso]),
      ]);
      const changes: Array<{ at: string; message: Message }> = [
        ...tokens.map((r) => ({
          at: r.at,
          message: { kind: 'tokens_revoked', principalId: r.principal_id, tokenIds: r.token_ids } as const,
        })),
        ...jwts.map((r) => ({
          at: r.jwts_not_before,
          message: { kind: 'jwts_revoked', principalId: r.principal_id, issuedBefore: r.jwts_not_before } as const,
        })),
        ...grants.map((r) => ({
          at: r.revoked_at ?? r.granted_at,
          message: { kind: 'grant', change: r.revoked_at === null ? 'added' : 'revoked', grant: toGrant(r) } as const,
        })),
      ];
      // Stable: a grant's changes keep their id order when they share a time.
      changes.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
      return changes.map((change) => change.message);
    },
  };
}
