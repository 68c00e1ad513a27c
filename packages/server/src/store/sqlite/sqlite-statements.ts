import type { Database, Statement } from 'better-sqlite3';
import { INVITATION_COLUMNS, INVITE_COLUMNS, PRINCIPAL_COLUMNS } from './sqlite-rows.js';

const READABLE_THREADS = `readable(id) AS (
    SELECT thread_id FROM grants WHERE principal_id = @viewer AND revoked_at IS NULL
    UNION
    SELECT t.thread_id FROM threads t JOIN readable r ON t.parent_thread_id = r.id
  )`;
const VISIBLE_PRINCIPALS = `visible(id) AS (
    SELECT @viewer
    UNION SELECT principal_id FROM principal_owners WHERE owner_principal_id = @viewer
    UNION SELECT owner_principal_id FROM principal_owners WHERE principal_id = @viewer
    UNION SELECT g.principal_id FROM grants g JOIN readable r ON g.thread_id = r.id WHERE g.revoked_at IS NULL
  )`;
const GRANT_COLUMNS = 'thread_id, principal_id, role, granted_by, granted_at, joined_seq, revoked_at';
const THREAD_COLUMNS = 'thread_id, parent_thread_id, title, created_by, created_at, head_seq';
const EVENT_COLUMNS = 'thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at';

const s = (sql: string): string => sql;

const SQL = {
  principalById: s(`SELECT ${PRINCIPAL_COLUMNS} FROM principals p WHERE p.principal_id = ?`),
  principalExists: s('SELECT 1 FROM principals WHERE principal_id = ?'),
  insertPrincipal: s(
    'INSERT INTO principals (principal_id, kind, display_name, joinable_by, created_at) VALUES (?, ?, ?, ?, ?)',
  ),
  updatePrincipal: s(`UPDATE principals SET display_name = coalesce(@displayName, display_name),
      joinable_by = coalesce(@joinableBy, joinable_by) WHERE principal_id = @principalId`),
  insertOwner: s('INSERT INTO principal_owners (principal_id, owner_principal_id, position) VALUES (?, ?, ?)'),
  searchVisible: s(`WITH RECURSIVE ${READABLE_THREADS}, ${VISIBLE_PRINCIPALS}
      SELECT ${PRINCIPAL_COLUMNS} FROM principals p JOIN visible v ON p.principal_id = v.id
      WHERE instr(lower(p.principal_id), @q) > 0 OR instr(lower(coalesce(p.display_name, '')), @q) > 0
      ORDER BY p.principal_id LIMIT @limit`),
  isVisible: s(`WITH RECURSIVE ${READABLE_THREADS}, ${VISIBLE_PRINCIPALS}
      SELECT 1 FROM visible WHERE id = @target LIMIT 1`),

  insertToken: s('INSERT INTO tokens (token_id, principal_id, hash, created_at) VALUES (?, ?, ?, ?)'),
  tokenById: s('SELECT * FROM tokens WHERE token_id = ?'),
  tokensOf: s('SELECT * FROM tokens WHERE principal_id = ? AND revoked_at IS NULL ORDER BY rowid'),
  liveTokenByHash: s('SELECT * FROM tokens WHERE hash = ? AND revoked_at IS NULL'),
  liveTokenIdsOf: s('SELECT token_id FROM tokens WHERE principal_id = ? AND revoked_at IS NULL'),
  revokeToken: s('UPDATE tokens SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL'),
  logRevocation: s('INSERT INTO token_revocations (token_id, principal_id, revoked_at) VALUES (?, ?, ?)'),
  setJwtsNotBefore: s('UPDATE oidc_subjects SET jwts_not_before = ? WHERE principal_id = ?'),
  revocationCursor: s('SELECT coalesce(max(seq), 0) AS seq FROM token_revocations'),
  revocationsAfter: s(
    'SELECT seq, token_id, principal_id, revoked_at FROM token_revocations WHERE seq > ? ORDER BY seq LIMIT ?',
  ),
  allPrincipals: s(`SELECT ${PRINCIPAL_COLUMNS} FROM principals p ORDER BY p.principal_id`),

  oidcSubject: s(
    'SELECT principal_id, name_claim, jwts_not_before FROM oidc_subjects WHERE issuer = ? AND subject = ?',
  ),
  insertOidcSubject: s(
    'INSERT INTO oidc_subjects (issuer, subject, principal_id, name_claim, created_at) VALUES (?, ?, ?, ?, ?)',
  ),
  setOidcNameClaim: s('UPDATE oidc_subjects SET name_claim = ? WHERE issuer = ? AND subject = ?'),
  setDisplayName: s('UPDATE principals SET display_name = ? WHERE principal_id = ?'),

  insertInvite: s(`INSERT INTO invites (invite_id, thread_id, role, created_by, hash, created_at, expires_at, max_uses)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
  inviteById: s(`SELECT ${INVITE_COLUMNS} FROM invites i WHERE i.invite_id = ?`),
  inviteByHash: s(`SELECT ${INVITE_COLUMNS}, i.hash FROM invites i WHERE i.hash = ?`),
  invitesOnThread: s(`SELECT ${INVITE_COLUMNS} FROM invites i WHERE i.thread_id = ? ORDER BY i.rowid`),
  revokeInvite: s('UPDATE invites SET revoked_at = ? WHERE thread_id = ? AND invite_id = ? AND revoked_at IS NULL'),
  useInvite: s('UPDATE invites SET uses = uses + 1 WHERE invite_id = ?'),

  invitationsOf: s(`SELECT ${INVITATION_COLUMNS} FROM invitations v JOIN threads t ON t.thread_id = v.thread_id
      WHERE v.principal_id = ? ORDER BY v.rowid`),
  invitation: s(`SELECT ${INVITATION_COLUMNS} FROM invitations v JOIN threads t ON t.thread_id = v.thread_id
      WHERE v.thread_id = ? AND v.principal_id = ?`),
  deleteInvitation: s('DELETE FROM invitations WHERE thread_id = ? AND principal_id = ?'),
  insertInvitation: s(`INSERT INTO invitations (thread_id, principal_id, role, invited_by, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?)`),
  dropExpiredInvitations: s('DELETE FROM invitations WHERE principal_id = ? AND expires_at <= ?'),
  dropOldestInvitations: s(`DELETE FROM invitations WHERE principal_id = @principalId AND rowid NOT IN
      (SELECT rowid FROM invitations WHERE principal_id = @principalId ORDER BY rowid DESC LIMIT @keep)`),

  threadById: s(`SELECT ${THREAD_COLUMNS} FROM threads WHERE thread_id = ?`),
  threadByKey: s(`SELECT ${THREAD_COLUMNS} FROM threads
      WHERE created_by = ? AND coalesce(parent_thread_id, '') = ? AND create_key = ?`),
  insertThread:
    s(`INSERT INTO threads (thread_id, parent_thread_id, title, created_by, created_at, head_seq, create_key)
      VALUES (?, ?, ?, ?, ?, 0, ?)`),
  headSeq: s('SELECT head_seq FROM threads WHERE thread_id = ?'),
  headSeqAndGrant: s(`SELECT t.head_seq, EXISTS (SELECT 1 FROM grants g
      WHERE g.thread_id = t.thread_id AND g.principal_id = ? AND g.revoked_at IS NULL) AS granted
    FROM threads t WHERE t.thread_id = ?`),
  setHeadSeq: s('UPDATE threads SET head_seq = ? WHERE thread_id = ?'),
  threadsWithLiveGrant: s(`SELECT ${THREAD_COLUMNS.split(', ')
    .map((c) => `t.${c}`)
    .join(', ')}
      FROM threads t JOIN grants g ON g.thread_id = t.thread_id
      WHERE g.principal_id = ? AND g.revoked_at IS NULL ORDER BY t.rowid`),
  ancestorGrant: s(`WITH RECURSIVE anc(id) AS (
        SELECT parent_thread_id FROM threads WHERE thread_id = ?
        UNION ALL
        SELECT t.parent_thread_id FROM threads t JOIN anc ON t.thread_id = anc.id WHERE t.parent_thread_id IS NOT NULL
      )
      SELECT 1 FROM grants g JOIN anc ON g.thread_id = anc.id WHERE g.principal_id = ? AND g.revoked_at IS NULL LIMIT 1`),

  liveGrant: s(`SELECT ${GRANT_COLUMNS} FROM grants WHERE thread_id = ? AND principal_id = ? AND revoked_at IS NULL`),
  liveGrantsOnThread: s(
    `SELECT ${GRANT_COLUMNS} FROM grants WHERE thread_id = ? AND revoked_at IS NULL ORDER BY grant_id`,
  ),
  liveGrantsOf: s(
    `SELECT ${GRANT_COLUMNS} FROM grants WHERE principal_id = ? AND revoked_at IS NULL ORDER BY grant_id`,
  ),
  insertGrant: s(`INSERT INTO grants (thread_id, principal_id, role, granted_by, granted_at, joined_seq)
      VALUES (?, ?, ?, ?, ?, ?)`),
  setGrantRole: s('UPDATE grants SET role = ? WHERE thread_id = ? AND principal_id = ? AND revoked_at IS NULL'),
  revokeGrant: s('UPDATE grants SET revoked_at = ? WHERE thread_id = ? AND principal_id = ? AND revoked_at IS NULL'),

  insertEvent: s(`INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
  eventByClientId: s(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE thread_id = ? AND principal_id = ? AND client_event_id = ?`,
  ),
  eventsAfter: s(`SELECT ${EVENT_COLUMNS} FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
  eventsBefore: s(`SELECT ${EVENT_COLUMNS} FROM events WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`),

  runById: s('SELECT principal_id, started, finished FROM runs WHERE thread_id = ? AND run_id = ?'),
  upsertRun: s(`INSERT INTO runs (thread_id, run_id, principal_id, started, finished) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (thread_id, run_id) DO UPDATE SET started = excluded.started, finished = excluded.finished`),

  upsertCursor: s(`INSERT INTO cursors (thread_id, principal_id, seq) VALUES (?, ?, ?)
      ON CONFLICT (thread_id, principal_id) DO UPDATE SET seq = max(seq, excluded.seq)`),
  cursor: s('SELECT seq FROM cursors WHERE thread_id = ? AND principal_id = ?'),

  latestArtifactVersion: s('SELECT max(version) AS v FROM artifacts WHERE thread_id = ? AND name = ?'),
  insertArtifact: s(`INSERT INTO artifacts (thread_id, name, version, media_type, content, size, updated_by, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
  listArtifacts: s(`SELECT a.name, a.version, a.media_type, a.size, a.updated_by, a.updated_at FROM artifacts a
      WHERE a.thread_id = ? AND a.version = (SELECT max(version) FROM artifacts b WHERE b.thread_id = a.thread_id AND b.name = a.name)
      ORDER BY a.name`),
  artifactLatest: s(`SELECT name, version, media_type, size, updated_by, updated_at, content FROM artifacts
      WHERE thread_id = ? AND name = ? ORDER BY version DESC LIMIT 1`),
  artifactVersion: s(`SELECT name, version, media_type, size, updated_by, updated_at, content FROM artifacts
      WHERE thread_id = ? AND name = ? AND version = ?`),
  ping: s('SELECT 1'),
};

export type Statements = { readonly [K in keyof typeof SQL]: Statement };

/** Every statement the SQLite store uses, prepared once. */
export function prepareStatements(db: Database): Statements {
  const out: Record<string, Statement> = {};
  for (const [name, sql] of Object.entries(SQL)) out[name] = db.prepare(sql);
  return out as Statements;
}
