import type {
  EventEnvelope,
  Grant,
  Invitation,
  InviteInfo,
  JoinableBy,
  Principal,
  Role,
  Thread,
} from '@bubble/protocol';
import type { LiveBusMessage } from '../live/live-bus.js';

/**
 * The persistence boundary of the server. Every method is async so that a
 * PostgreSQL implementation drops in without touching the services or routes.
 *
 * Rules that must hold under concurrency (seq allocation, idempotency, run
 * ownership, the open-once/close-once rules, key idempotency of subthreads,
 * artifact versions) are enforced inside the store's write transaction; the
 * decisions themselves are pure functions in `../domain/` that the store calls
 * with the state it loaded, so every implementation applies the same rules.
 *
 * Failures are thrown as `BubbleError` (see `../errors/bubble-error.ts`).
 */
export interface BubbleStore {
  // principals and tokens
  createPrincipal(input: NewPrincipal, token?: NewTokenRecord): Promise<Principal>;
  getPrincipal(principalId: string): Promise<Principal | null>;
  /** Changes the given fields (a bot's `joinableBy` only; the service checks kinds and rights); 404 for an unknown id. */
  updatePrincipal(principalId: string, patch: PrincipalPatch): Promise<Principal>;
  /** Principals visible to `viewerId` (see `isPrincipalVisible`), id or displayName containing `query` (case-insensitive), ordered by id. */
  searchVisiblePrincipals(viewerId: string, query: string, limit: number): Promise<Principal[]>;
  /** Self, owned, owners, and principals with a live grant on a thread the viewer can read. */
  isPrincipalVisible(viewerId: string, targetId: string): Promise<boolean>;
  addToken(token: NewTokenRecord): Promise<TokenRecord>;
  listTokens(principalId: string): Promise<TokenRecord[]>;
  /** Looks a live (not revoked) token up by the SHA-256 of its plaintext. */
  findLiveTokenByHash(hash: Buffer): Promise<TokenRecord | null>;
  /**
   * Revokes the given token (or, when `tokenId` is omitted, every credential of the principal, as
   * `revokeAllCredentials` does); returns the token ids revoked now.
   * Each revocation is also written to the revocation log (`readTokenRevocationsAfter`) in the same transaction.
   */
  revokeTokens(principalId: string, tokenId?: string): Promise<string[]>;
  /**
   * Every live local token of the principal, and, for a person who signs in with an identity
   * provider, every JWT issued before now: the subject's `jwtsNotBefore` becomes now (later
   * `findOidcSubject` answers carry it) and the revocation log gets an entry without a token id
   * saying so, all in one transaction. `jwtsIssuedBefore` is null for a principal no JWT maps to.
   * Published as `tokens_revoked` (when tokens were revoked) and `jwts_revoked`.
   */
  revokeAllCredentials(principalId: string): Promise<{ revokedTokenIds: string[]; jwtsIssuedBefore: string | null }>;
  /** Every principal, ordered by id (the operator's `principal list`). */
  listPrincipals(): Promise<Principal[]>;
  /** The newest entry of the token revocation log, 0 when it is empty: where a watcher starts reading. */
  tokenRevocationCursor(): Promise<number>;
  /**
   * Revocations logged after `cursor`, oldest first, at most `limit`: those of every process
   * sharing the storage (the operator CLI revokes while the server runs), this one's included.
   */
  readTokenRevocationsAfter(cursor: number, limit: number): Promise<TokenRevocation[]>;

  // people signed in with an identity provider
  /** The principal an OIDC subject maps to, with the `name` claim last seen for it; null before its first sign-in. */
  findOidcSubject(issuer: string, subject: string): Promise<OidcSubject | null>;
  /**
   * Maps `(issuer, subject)` to its one principal for ever. On first use it creates the human,
   * taking the first free id of `idCandidates` (the caller passes them in order; a taken id and
   * `system` are skipped; none free is a 409). Later, a `nameClaim` other than the one last seen
   * becomes the principal's displayName (a null claim changes nothing).
   */
  resolveOidcSubject(input: ResolveOidcSubject): Promise<{ principal: Principal; created: boolean }>;

  // threads and grants
  /** Creates a thread and the creator's owner grant (seq 1 `participant_added`). With `key`, an existing thread of the same creator, parent and key is returned instead. */
  createThread(input: NewThread): Promise<{ thread: Thread; created: boolean }>;
  getThread(threadId: string): Promise<Thread | null>;
  /** The thread, the principal's own live grant on it, and whether a live grant on an ancestor makes it readable. */
  getThreadAccess(threadId: string, principalId: string): Promise<ThreadAccess | null>;
  listThreadsWithLiveGrant(principalId: string): Promise<Thread[]>;
  listLiveGrantsOnThread(threadId: string): Promise<Grant[]>;
  listLiveGrantsOfPrincipal(principalId: string): Promise<Grant[]>;
  /** Adds (or changes the role of) a grant, appending a `participant_added` event by `system`. */
  putGrant(input: PutGrant): Promise<{ grant: Grant; change: 'created' | 'role_changed' | 'unchanged' }>;
  /** Revokes a live grant, appending `participant_removed` by `system`; null when there is none. */
  revokeGrant(input: { threadId: string; principalId: string; by: string }): Promise<Grant | null>;

  // invites
  createInvite(input: NewInvite): Promise<InviteInfo>;
  /** Invites of the thread that can still be accepted (not revoked, not expired, not used up), oldest first. */
  listOpenInvites(threadId: string): Promise<InviteInfo[]>;
  /** Revokes an invite of this thread; false when there is no such live invite. */
  revokeInvite(threadId: string, inviteId: string): Promise<boolean>;
  /**
   * Accepts the invite whose token has this SHA-256, for `principalId`, in one transaction (see
   * `domain/invite-rules.ts`): 404 for an unknown, revoked, expired or used-up invite, or one
   * whose creator is no longer an owner of the thread, whoever accepts it; on a live invite, a
   * principal already holding the grant is answered `unchanged` and no use is counted; otherwise
   * the grant is made (`participant_added` by `system`, `by` the invite's creator) and one use is counted.
   */
  acceptInvite(input: {
    hash: Buffer;
    principalId: string;
  }): Promise<{ grant: Grant; change: 'created' | 'role_changed' | 'unchanged' }>;

  // invitations (protocol.md, Consent)
  /**
   * In one transaction: when `principalId` is a human with no live grant on the thread, its pending
   * invitation there becomes this one (a newer one replaces an older), its expired invitations are
   * dropped, and beyond `maxPending` its oldest ones. For a bot or an unknown id it writes nothing,
   * but costs the same write: the caller answers both alike and must not learn which it was.
   */
  inviteToThread(input: NewInvitation): Promise<void>;
  /** The principal's invitations that it could accept now (see `domain/invitation-rules.ts`), oldest first. */
  listPendingInvitations(principalId: string): Promise<Invitation[]>;
  /**
   * Takes up the principal's invitation to the thread and drops it, in one transaction: the grant
   * is made by the inviter (`participant_added` by `system`, `by` the inviter); an invitee already
   * on the thread is answered `unchanged`. 404 when none is pending: never made, declined, expired,
   * or void because the inviter lost the grant that let them invite.
   */
  acceptInvitation(input: {
    threadId: string;
    principalId: string;
  }): Promise<{ grant: Grant; change: 'created' | 'role_changed' | 'unchanged' }>;
  /** Drops the principal's invitation to the thread; false when there was none (expired ones count as none). */
  declineInvitation(input: { threadId: string; principalId: string }): Promise<boolean>;

  // events
  appendEvents(input: AppendInput): Promise<AppendResult>;
  readEventsAfter(
    threadId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ events: EventEnvelope[]; headSeq: number }>;
  readEventsBefore(
    threadId: string,
    beforeSeq: number,
    limit: number,
  ): Promise<{ events: EventEnvelope[]; headSeq: number }>;

  // cursors
  /** Moves the cursor forward (a lower seq is ignored) and returns the stored value. */
  putCursor(threadId: string, principalId: string, seq: number): Promise<number>;
  getCursor(threadId: string, principalId: string): Promise<number>;

  // artifacts
  putArtifact(input: PutArtifactInput): Promise<ArtifactRecord>;
  listArtifacts(threadId: string): Promise<ArtifactMeta[]>;
  getArtifact(threadId: string, name: string, version?: number): Promise<ArtifactRecord | null>;

  /** Answers when the store can serve (for `/healthz`). */
  ping(): Promise<void>;
  /** Waits for pending writes, then closes. */
  close(): Promise<void>;
}

/**
 * Makes every commit so far durable (SQLite: an `fdatasync` of the WAL file), off the event loop,
 * and calls back once it has, with the error if it could not.
 */
export type DurableSync = (done: (error: Error | null) => void) => void;

export interface StoreOpenOptions {
  /** Called once each commit is durable, in commit order (per thread, seq order), before its writes are answered. */
  onCommit?: (messages: LiveBusMessage[]) => void;
  now?: () => Date;
}

export interface NewPrincipal {
  principalId: string;
  kind: 'human' | 'bot';
  displayName: string | null;
  ownerPrincipalIds: string[];
  /** Bots only; default `owners`. */
  joinableBy?: JoinableBy;
}

export interface PrincipalPatch {
  displayName?: string | undefined;
  joinableBy?: JoinableBy | undefined;
}

export interface NewTokenRecord {
  tokenId: string;
  principalId: string;
  hash: Buffer;
}

export interface TokenRecord {
  tokenId: string;
  principalId: string;
  hash: Buffer;
  createdAt: string;
  revokedAt: string | null;
}

export interface TokenRevocation {
  /** Position in the revocation log. */
  cursor: number;
  principalId: string;
  /** The token revoked; null for an entry that ends every JWT of the principal issued before `revokedAt`. */
  tokenId: string | null;
  revokedAt: string;
}

export interface OidcSubject {
  principal: Principal;
  /** The `name` claim last seen for this subject (null: none yet). */
  nameClaim: string | null;
  /** JWTs of this subject issued (`iat`) before this time are refused (`revokeAllCredentials`); null: none is. */
  jwtsNotBefore: string | null;
}

export interface ResolveOidcSubject {
  issuer: string;
  subject: string;
  /**
   * Ids to try, in order, when the principal is created. A list, never a one-shot iterator: the
   * write job that walks it may run twice (a group commit reruns its jobs when one fails).
   */
  idCandidates: readonly string[];
  nameClaim: string | null;
}

export interface NewInvite {
  inviteId: string;
  threadId: string;
  role: Role;
  createdBy: string;
  /** SHA-256 of the plaintext token. */
  hash: Buffer;
  expiresAt: string;
  maxUses: number;
}

export interface NewInvitation {
  threadId: string;
  principalId: string;
  role: Role;
  invitedBy: string;
  /** How many pending invitations a person keeps (the oldest drop first). */
  maxPending: number;
}

export interface NewThread {
  threadId: string;
  parentThreadId: string | null;
  title: string | null;
  createdBy: string;
  key: string | null;
}

export interface ThreadAccess {
  thread: Thread;
  ownGrant: Grant | null;
  /** A live grant of the principal on a strict ancestor of the thread. */
  ancestorGrant: boolean;
}

export interface PutGrant {
  threadId: string;
  principalId: string;
  role: 'owner' | 'member';
  by: string;
  /** When false, an existing live grant with another role is left unchanged. */
  mayChangeRole: boolean;
}

export interface NewEventInput {
  type: string;
  data: Record<string, unknown>;
  /** `JSON.stringify(data)`, when the caller already has it. */
  dataJson?: string | undefined;
  clientEventId?: string | undefined;
}

export interface AppendInput {
  threadId: string;
  principalId: string;
  events: NewEventInput[];
}

export interface AppendResult {
  events: EventEnvelope[];
  /** True when every event of the request was an idempotent replay. */
  replay: boolean;
}

export interface PutArtifactInput {
  threadId: string;
  name: string;
  content: string;
  mediaType: string;
  baseVersion?: number | undefined;
  by: string;
}

export interface ArtifactMeta {
  name: string;
  version: number;
  mediaType: string;
  updatedBy: string;
  updatedAt: string;
  size: number;
}

export interface ArtifactRecord extends ArtifactMeta {
  content: string;
}
