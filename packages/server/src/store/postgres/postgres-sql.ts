/**
 * The PostgreSQL store's statements, beside their SQLite twins in `../sqlite/sqlite-statements.ts`.
 * Rows come out in the shapes of `../sqlite/sqlite-rows.ts`, so both stores share its mappers and
 * answer the same objects.
 */

import { INVITATION_COLUMNS } from '../sqlite/sqlite-rows.js';

/** A read, on the pool or inside a write job's transaction. */
export type Read = <R>(sql: string, params?: readonly unknown[]) => Promise<R[]>;

export const PRINCIPAL_COLUMNS = `p.principal_id, p.kind, p.display_name, p.joinable_by, p.created_at,
  coalesce((SELECT json_agg(o.owner_principal_id ORDER BY o.position) FROM principal_owners o
    WHERE o.principal_id = p.principal_id)::text, '[]') AS owners`;

export const INVITE_COLUMNS = `i.invite_id, i.thread_id, i.role, i.created_by, i.created_at, i.expires_at, i.max_uses,
  i.uses, i.revoked_at, EXISTS (SELECT 1 FROM grants g WHERE g.thread_id = i.thread_id AND g.principal_id = i.created_by
    AND g.role = 'owner' AND g.revoked_at IS NULL)::int AS creator_is_owner`;

export const GRANT_COLUMNS = 'thread_id, principal_id, role, granted_by, granted_at, joined_seq, revoked_at';
export const THREAD_COLUMNS = 'thread_id, parent_thread_id, title, created_by, created_at, head_seq';
export const EVENT_COLUMNS = 'thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at';
export const TOKEN_COLUMNS = 'token_id, principal_id, hash, created_at, revoked_at';

// $1 is the viewer. The viewer's literal is COLLATE "C" like the columns it is unioned with.
const READABLE_THREADS = `readable(id) AS (
    SELECT thread_id FROM grants WHERE principal_id = $1 AND revoked_at IS NULL
    UNION
    SELECT t.thread_id FROM threads t JOIN readable r ON t.parent_thread_id = r.id
  )`;
const VISIBLE_PRINCIPALS = `visible(id) AS (
    SELECT $1::text COLLATE "C"
    UNION SELECT principal_id FROM principal_owners WHERE owner_principal_id = $1
    UNION SELECT owner_principal_id FROM principal_owners WHERE principal_id = $1
    UNION SELECT g.principal_id FROM grants g JOIN readable r ON g.thread_id = r.id WHERE g.revoked_at IS NULL
  )`;

export const SQL = {
  principalById: `SELECT ${PRINCIPAL_COLUMNS} FROM principals p WHERE p.principal_id = $1`,
  allPrincipals: `SELECT ${PRINCIPAL_COLUMNS} FROM principals p ORDER BY p.principal_id`,
  // lower() of "C" text folds ASCII only, as SQLite's does; the query is lowered by the caller.
  searchVisible: `WITH RECURSIVE ${READABLE_THREADS}, ${VISIBLE_PRINCIPALS}
      SELECT ${PRINCIPAL_COLUMNS} FROM principals p JOIN visible v ON p.principal_id = v.id
      WHERE strpos(lower(p.principal_id), $2) > 0 OR strpos(lower(coalesce(p.display_name, '')), $2) > 0
      ORDER BY p.principal_id LIMIT $3`,
  isVisible: `WITH RECURSIVE ${READABLE_THREADS}, ${VISIBLE_PRINCIPALS}
      SELECT 1 FROM visible WHERE id = $2 LIMIT 1`,
  principalIdsTaken: 'SELECT principal_id FROM principals WHERE principal_id = ANY($1::text[])',
  insertPrincipal:
    'INSERT INTO principals (principal_id, kind, display_name, joinable_by, created_at) VALUES ($1, $2, $3, $4, $5)',
  insertOwners: `INSERT INTO principal_owners (principal_id, owner_principal_id, position)
      SELECT $1, o, n - 1 FROM unnest($2::text[]) WITH ORDINALITY AS x(o, n)`,
  updatePrincipal: `UPDATE principals SET display_name = coalesce($2, display_name),
      joinable_by = coalesce($3, joinable_by) WHERE principal_id = $1`,
  setDisplayName: 'UPDATE principals SET display_name = $2 WHERE principal_id = $1',

  insertToken: `INSERT INTO tokens (token_id, principal_id, hash, created_at) VALUES ($1, $2, $3, $4)
      RETURNING ${TOKEN_COLUMNS}`,
  tokensOf: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE principal_id = $1 AND revoked_at IS NULL ORDER BY ord`,
  liveTokenByHash: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = $1 AND revoked_at IS NULL`,
  revokeTokens: `WITH r AS (UPDATE tokens SET revoked_at = $1
        WHERE principal_id = $2 AND token_id = ANY($3::text[]) AND revoked_at IS NULL RETURNING token_id, ord)
      SELECT token_id FROM r ORDER BY ord`,
  revokeAllTokens: `WITH r AS (UPDATE tokens SET revoked_at = $1
        WHERE principal_id = $2 AND revoked_at IS NULL RETURNING token_id, ord)
      SELECT token_id FROM r ORDER BY ord`,
  setJwtsNotBefore: 'UPDATE oidc_subjects SET jwts_not_before = $1 WHERE principal_id = $2',
  revocationCursor: 'SELECT coalesce(max(seq), 0) AS seq FROM token_revocations',
  revocationsAfter:
    'SELECT seq, token_id, principal_id, revoked_at FROM token_revocations WHERE seq > $1 ORDER BY seq LIMIT $2',

  oidcSubject: `SELECT s.principal_id, s.name_claim, s.jwts_not_before, ${PRINCIPAL_COLUMNS}
      FROM oidc_subjects s JOIN principals p ON p.principal_id = s.principal_id WHERE s.issuer = $1 AND s.subject = $2`,
  oidcSubjectRow: 'SELECT principal_id, name_claim FROM oidc_subjects WHERE issuer = $1 AND subject = $2',
  insertOidcSubject:
    'INSERT INTO oidc_subjects (issuer, subject, principal_id, name_claim, created_at) VALUES ($1, $2, $3, $4, $5)',
  setOidcNameClaim: 'UPDATE oidc_subjects SET name_claim = $3 WHERE issuer = $1 AND subject = $2',

  insertInvite: `INSERT INTO invites (invite_id, thread_id, role, created_by, hash, created_at, expires_at, max_uses)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  inviteById: `SELECT ${INVITE_COLUMNS} FROM invites i WHERE i.invite_id = $1`,
  inviteByHash: `SELECT ${INVITE_COLUMNS}, i.hash FROM invites i WHERE i.hash = $1`,
  inviteThreadByHash: 'SELECT thread_id FROM invites WHERE hash = $1',
  invitesOnThread: `SELECT ${INVITE_COLUMNS} FROM invites i WHERE i.thread_id = $1 ORDER BY i.ord`,
  revokeInvite: 'UPDATE invites SET revoked_at = $1 WHERE thread_id = $2 AND invite_id = $3 AND revoked_at IS NULL',
  useInvite: 'UPDATE invites SET uses = uses + 1 WHERE invite_id = $1',

  invitationsOf: `SELECT ${INVITATION_COLUMNS} FROM invitations v JOIN threads t ON t.thread_id = v.thread_id
      WHERE v.principal_id = $1 ORDER BY v.ord`,
  invitation: `SELECT ${INVITATION_COLUMNS} FROM invitations v JOIN threads t ON t.thread_id = v.thread_id
      WHERE v.thread_id = $1 AND v.principal_id = $2`,
  deleteInvitation: 'DELETE FROM invitations WHERE thread_id = $1 AND principal_id = $2',
  insertInvitation: `INSERT INTO invitations (thread_id, principal_id, role, invited_by, created_at, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6)`,
  dropExpiredInvitations: 'DELETE FROM invitations WHERE principal_id = $1 AND expires_at <= $2',
  dropOldestInvitations: `DELETE FROM invitations WHERE principal_id = $1 AND ord NOT IN
      (SELECT ord FROM invitations WHERE principal_id = $1 ORDER BY ord DESC LIMIT $2)`,
  invitationFacts: `SELECT p.kind,
      EXISTS (SELECT 1 FROM threads WHERE thread_id = $2) AS thread_exists,
      EXISTS (SELECT 1 FROM grants WHERE thread_id = $2 AND principal_id = $1 AND revoked_at IS NULL) AS granted
    FROM principals p WHERE p.principal_id = $1`,

  threadById: `SELECT ${THREAD_COLUMNS} FROM threads WHERE thread_id = $1`,
  threadExists: 'SELECT 1 FROM threads WHERE thread_id = $1',
  /** What createThread decides on, in one round trip: $1 creator, $2 parent or '', $3 key, $4 parent, $5 id. */
  threadCreationFacts: `SELECT
      (SELECT row_to_json(x) FROM (SELECT ${THREAD_COLUMNS} FROM threads
        WHERE created_by = $1 AND coalesce(parent_thread_id, '') = $2 AND create_key = $3) x) AS by_key,
      ($4::text IS NULL OR EXISTS (SELECT 1 FROM threads WHERE thread_id = $4)) AS parent_exists,
      EXISTS (SELECT 1 FROM threads WHERE thread_id = $5) AS taken`,
  insertThread: `INSERT INTO threads (thread_id, parent_thread_id, title, created_by, created_at, head_seq, create_key)
      VALUES ($1, $2, $3, $4, $5, 0, $6) RETURNING ${THREAD_COLUMNS}`,
  threadAccess: `SELECT ${THREAD_COLUMNS},
      (SELECT row_to_json(g) FROM (SELECT ${GRANT_COLUMNS} FROM grants
        WHERE thread_id = $1 AND principal_id = $2 AND revoked_at IS NULL) g) AS own_grant,
      (parent_thread_id IS NOT NULL AND EXISTS (
        WITH RECURSIVE anc(id) AS (
          SELECT parent_thread_id FROM threads WHERE thread_id = $1
          UNION ALL
          SELECT t.parent_thread_id FROM threads t JOIN anc ON t.thread_id = anc.id WHERE t.parent_thread_id IS NOT NULL
        )
        SELECT 1 FROM grants g JOIN anc ON g.thread_id = anc.id WHERE g.principal_id = $2 AND g.revoked_at IS NULL
      )) AS ancestor_grant
    FROM threads WHERE thread_id = $1`,
  threadsWithLiveGrant: `SELECT ${THREAD_COLUMNS.split(', ')
    .map((c) => `t.${c}`)
    .join(', ')}
      FROM threads t JOIN grants g ON g.thread_id = t.thread_id
      WHERE g.principal_id = $1 AND g.revoked_at IS NULL ORDER BY t.ord`,
  threadHeads: 'SELECT thread_id, head_seq FROM threads WHERE thread_id = ANY($1::text[])',

  liveGrant: `SELECT ${GRANT_COLUMNS} FROM grants WHERE thread_id = $1 AND principal_id = $2 AND revoked_at IS NULL`,
  liveGrantsOnThread: `SELECT ${GRANT_COLUMNS} FROM grants WHERE thread_id = $1 AND revoked_at IS NULL ORDER BY grant_id`,
  liveGrantsOf: `SELECT ${GRANT_COLUMNS} FROM grants WHERE principal_id = $1 AND revoked_at IS NULL ORDER BY grant_id`,
  insertGrant: `INSERT INTO grants (thread_id, principal_id, role, granted_by, granted_at, joined_seq)
      VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${GRANT_COLUMNS}`,
  setGrantRole: `UPDATE grants SET role = $3 WHERE thread_id = $1 AND principal_id = $2 AND revoked_at IS NULL
      RETURNING ${GRANT_COLUMNS}`,
  revokeGrant: 'UPDATE grants SET revoked_at = $1 WHERE thread_id = $2 AND principal_id = $3 AND revoked_at IS NULL',

  /** Everything an append decides on, in one round trip: $1 thread, $2 author, $3 clientEventIds, $4 runIds. */
  appendFacts: `SELECT
      EXISTS (SELECT 1 FROM grants WHERE thread_id = $1 AND principal_id = $2 AND revoked_at IS NULL) AS granted,
      (SELECT json_agg(e) FROM (SELECT ${EVENT_COLUMNS} FROM events
        WHERE thread_id = $1 AND principal_id = $2 AND client_event_id = ANY($3::text[])) e) AS replays,
      (SELECT json_agg(r) FROM (SELECT run_id, principal_id, started, finished FROM runs
        WHERE thread_id = $1 AND run_id = ANY($4::text[])) r) AS runs`,
  // One statement for the head and the page: both from the same snapshot.
  eventsAfter: `SELECT t.head_seq, ${EVENT_COLUMNS.split(', ')
    .map((c) => `e.${c}`)
    .join(', ')} FROM threads t
      LEFT JOIN LATERAL (SELECT ${EVENT_COLUMNS} FROM events
        WHERE thread_id = t.thread_id AND seq > $2 ORDER BY seq LIMIT $3) e ON true
      WHERE t.thread_id = $1`,
  eventsBefore: `SELECT t.head_seq, ${EVENT_COLUMNS.split(', ')
    .map((c) => `e.${c}`)
    .join(', ')} FROM threads t
      LEFT JOIN LATERAL (SELECT ${EVENT_COLUMNS} FROM events
        WHERE thread_id = t.thread_id AND seq < $2 ORDER BY seq DESC LIMIT $3) e ON true
      WHERE t.thread_id = $1`,

  upsertCursor: `INSERT INTO cursors (thread_id, principal_id, seq) VALUES ($1, $2, $3)
      ON CONFLICT (thread_id, principal_id) DO UPDATE SET seq = greatest(cursors.seq, excluded.seq) RETURNING seq`,
  cursor: 'SELECT seq FROM cursors WHERE thread_id = $1 AND principal_id = $2',

  latestArtifactVersion: 'SELECT coalesce(max(version), 0) AS v FROM artifacts WHERE thread_id = $1 AND name = $2',
  insertArtifact: `INSERT INTO artifacts (thread_id, name, version, media_type, content, size, updated_by, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  listArtifacts: `SELECT DISTINCT ON (name) name, version, media_type, size, updated_by, updated_at FROM artifacts
      WHERE thread_id = $1 ORDER BY name, version DESC`,
  artifactLatest: `SELECT name, version, media_type, size, updated_by, updated_at, content FROM artifacts
      WHERE thread_id = $1 AND name = $2 ORDER BY version DESC LIMIT 1`,
  artifactVersion: `SELECT name, version, media_type, size, updated_by, updated_at, content FROM artifacts
      WHERE thread_id = $1 AND name = $2 AND version = $3`,

  outboxHead: 'SELECT coalesce(max(id), 0) AS id FROM outbox',
  databaseNow: 'SELECT now() AS now',
  outboxAfter: 'SELECT id, message, created_at FROM outbox WHERE id > $1 ORDER BY id LIMIT $2',
  outboxTail: 'SELECT coalesce(min(id), 0) AS id FROM outbox',
  ping: 'SELECT 1',
} as const;
