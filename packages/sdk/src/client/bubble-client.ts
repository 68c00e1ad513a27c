import {
  AcceptInvitationResponseSchema,
  AcceptInviteResponseSchema,
  AppendResponseSchema,
  ArtifactListResponseSchema,
  ArtifactResponseSchema,
  ArtifactSummarySchema,
  CreatePrincipalResponseSchema,
  CursorResponseSchema,
  GrantListResponseSchema,
  GrantResponseSchema,
  HealthSchema,
  InfoSchema,
  InvitationListResponseSchema,
  InviteListResponseSchema,
  PendingInvitationResponseSchema,
  InviteResponseSchema,
  OwnTokenListResponseSchema,
  ParticipantListResponseSchema,
  MintTokenResponseSchema,
  PrincipalListResponseSchema,
  PrincipalResponseSchema,
  ReadEventsResponseSchema,
  ThreadListResponseSchema,
  ThreadResponseSchema,
  TokenListResponseSchema,
  WhoamiResponseSchema,
  type Artifact,
  type ArtifactSummary,
  type EventEnvelope,
  type Grant,
  type Info,
  type Invitation,
  type Invite,
  type InviteInfo,
  type OwnTokenInfo,
  type NewEvent,
  type ParticipantGrant,
  type JoinableBy,
  type Principal,
  type Role,
  type PendingInvitationResponse,
  type Thread,
  type Token,
  type TokenInfo,
} from '@bubble/protocol';
import { pino, type Logger } from 'pino';
import { z } from 'zod';
import { BubbleApiError } from './bubble-api-error.js';
import { withClientEventIds } from './client-event-id.js';
import { staticCredentials, type Credentials } from './credentials.js';
import { DEFAULT_RETRY, HttpTransport, type RetryOptions } from './http-transport.js';
import {
  BubbleLive,
  type BubbleLiveOptions,
  type GrantsSubscription,
  type ThreadSubscription,
} from '../live/bubble-live.js';
import type { SubscribeThreadOptions } from '../live/live-subscription.js';

export interface BubbleClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:7777`. */
  readonly url: string;
  /** A bearer token. Only `info()` and `healthz()` work without one (or `credentials`). */
  readonly token?: string;
  /**
   * A bearer that changes (an identity provider's access token, renewed before it expires).
   * Asked for before each request and each WebSocket sign-in; renewed once when the server
   * refuses it (HTTP 401: the request is sent again; close 4001: the socket resumes). Wins over `token`.
   */
  readonly credentials?: Credentials;
  /** Per-attempt timeout of an HTTP request, in ms. Default 15 000. */
  readonly timeoutMs?: number;
  /** Retry policy of HTTP requests; `false` sends each request once. */
  readonly retry?: Partial<RetryOptions> | false;
  readonly logger?: Logger;
  /** The fetch to use; Node's global fetch (undici, keep-alive) by default. */
  readonly fetch?: typeof globalThis.fetch;
  /** Options of the live WebSocket connection. */
  readonly live?: BubbleLiveOptions;
  /** Random source for jitter, in [0, 1). */
  readonly random?: () => number;
  /**
   * HTTP requests on the wire at once at most; the rest wait in order. Default: no cap. A bot
   * that follows thousands of threads sets one, so its start does not open thousands of sockets.
   */
  readonly maxConcurrentRequests?: number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface CreateThreadInput {
  readonly title?: string | null;
  readonly parentThreadId?: string | null;
  /** Idempotency key: a retry with the same parent and key returns the same thread. */
  readonly key?: string;
}

export interface ReadEventsInput {
  readonly after?: number;
  readonly before?: number;
  readonly limit?: number;
}

export interface CreateInviteInput {
  /** Default `member`. */
  readonly role?: Role;
  /** Default 7 days (the server's). */
  readonly expiresInSeconds?: number;
  /** Default 1 (the server's). */
  readonly maxUses?: number;
}

export interface PutArtifactInput {
  readonly content: string;
  readonly mediaType: string;
  /** Optimistic concurrency: the write fails with `conflict` unless this is the latest version. */
  readonly baseVersion?: number;
}

/** A typed client for every route of the Bubble wire protocol (protocol.md), plus its live connection. */
/**
 * What adding a participant did: `granted` (someone the caller can see), or `pending` (anyone else,
 * or an id that does not exist; protocol.md, Consent), which says nothing about the id.
 */
export type AddParticipantResult =
  | { status: 'granted'; grant: Grant; created: boolean }
  | { status: 'pending'; created: false; invitation: PendingInvitationResponse['invitation'] };

export class BubbleClient {
  readonly url: string;
  readonly #transport: HttpTransport;
  readonly #logger: Logger;
  readonly #credentials: Credentials | undefined;
  readonly #liveOptions: BubbleLiveOptions;
  #liveConnection: BubbleLive | undefined;

  constructor(options: BubbleClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.#credentials =
      options.credentials ?? (options.token === undefined ? undefined : staticCredentials(options.token));
    this.#logger = options.logger ?? pino({ level: 'silent' });
    this.#liveOptions = options.live ?? {};
    const retry = options.retry === false ? { ...DEFAULT_RETRY, attempts: 1 } : { ...DEFAULT_RETRY, ...options.retry };
    this.#transport = new HttpTransport({
      baseUrl: this.url,
      credentials: this.#credentials,
      timeoutMs: options.timeoutMs ?? 15_000,
      retry,
      fetch: options.fetch ?? globalThis.fetch,
      logger: this.#logger,
      random: options.random ?? Math.random,
      maxInFlight: options.maxConcurrentRequests,
    });
  }

  // Discovery and health (no credential needed).

  /** The server's name, version, extensions and, where it has an identity provider, `auth.oidc`. */
  async info(options: CallOptions = {}): Promise<Info> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/v1/info',
      schema: InfoSchema,
      retry: 'idempotent',
      auth: false,
      ...options,
    });
    return body;
  }

  async healthz(options: CallOptions = {}): Promise<{ ok: boolean }> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/healthz',
      schema: HealthSchema,
      retry: 'idempotent',
      auth: false,
      ...options,
    });
    return body;
  }

  // Principals and tokens.

  async whoami(options: CallOptions = {}): Promise<Principal> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/v1/auth/whoami',
      schema: WhoamiResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.principal;
  }

  /** Creates a bot owned by the caller (a human). The plaintext token is returned once. Never retried after an uncertain failure. */
  async createBot(
    input: { principalId: string; displayName?: string },
    options: CallOptions = {},
  ): Promise<{ principal: Principal; token: Token }> {
    const { body } = await this.#transport.request({
      method: 'POST',
      path: '/v1/principals',
      body: {
        principalId: input.principalId,
        kind: 'bot',
        ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
      },
      schema: CreatePrincipalResponseSchema,
      retry: 'unsafe',
      ...options,
    });
    return body;
  }

  async searchPrincipals(
    input: { query?: string; limit?: number } = {},
    options: CallOptions = {},
  ): Promise<Principal[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/v1/principals',
      query: { query: input.query, limit: input.limit },
      schema: PrincipalListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.principals;
  }

  async getPrincipal(principalId: string, options: CallOptions = {}): Promise<Principal> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/principals/${enc(principalId)}`,
      schema: PrincipalResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.principal;
  }

  /**
   * Changes a principal's `displayName` (itself or an owner) or a bot's `joinableBy` (an owner):
   * `owners` lets only its owners put it on threads, `anyone` lets any participant.
   */
  async updatePrincipal(
    principalId: string,
    patch: { displayName?: string; joinableBy?: JoinableBy },
    options: CallOptions = {},
  ): Promise<Principal> {
    const { body } = await this.#transport.request({
      method: 'PATCH',
      path: `/v1/principals/${enc(principalId)}`,
      body: patch,
      schema: PrincipalResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.principal;
  }

  /** Mints another token for a principal the caller owns. Never retried after an uncertain failure. */
  async mintToken(principalId: string, options: CallOptions = {}): Promise<Token> {
    const { body } = await this.#transport.request({
      method: 'POST',
      path: `/v1/principals/${enc(principalId)}/tokens`,
      schema: MintTokenResponseSchema,
      retry: 'unsafe',
      ...options,
    });
    return body.token;
  }

  async listTokens(principalId: string, options: CallOptions = {}): Promise<TokenInfo[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/principals/${enc(principalId)}/tokens`,
      schema: TokenListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.tokens;
  }

  async revokeToken(principalId: string, tokenId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `/v1/principals/${enc(principalId)}/tokens/${enc(tokenId)}`,
      retry: 'idempotent',
      ...options,
    });
  }

  async revokeAllTokens(principalId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `/v1/principals/${enc(principalId)}/tokens`,
      retry: 'idempotent',
      ...options,
    });
  }

  // The caller's own tokens: every principal can end a token of its own that leaked.

  /** The caller's own local tokens (no secrets); the one this client signs in with has `current: true`. */
  async listMyTokens(options: CallOptions = {}): Promise<OwnTokenInfo[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/v1/auth/tokens',
      schema: OwnTokenListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.tokens;
  }

  /** Mints another token for the caller (a human); the plaintext is returned once. Never retried after an uncertain failure. */
  async mintMyToken(options: CallOptions = {}): Promise<Token> {
    const { body } = await this.#transport.request({
      method: 'POST',
      path: '/v1/auth/tokens',
      schema: MintTokenResponseSchema,
      retry: 'unsafe',
      ...options,
    });
    return body.token;
  }

  /** Revokes one of the caller's own tokens at once (its sockets close with 4003); revoking the current one signs this client out. */
  async revokeMyToken(tokenId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `/v1/auth/tokens/${enc(tokenId)}`,
      retry: 'idempotent',
      ...options,
    });
  }

  // Threads, participants, grants.

  /**
   * Creates a thread (or, with `parentThreadId`, a subthread). With a `key` the call is idempotent
   * and retried after uncertain failures; `created` is false when the key had been used already.
   */
  async createThread(
    input: CreateThreadInput = {},
    options: CallOptions = {},
  ): Promise<{ thread: Thread; created: boolean }> {
    const body: Record<string, unknown> = {};
    if (input.title !== undefined) body.title = input.title;
    if (input.parentThreadId !== undefined) body.parentThreadId = input.parentThreadId;
    if (input.key !== undefined) body.key = input.key;
    const result = await this.#transport.request({
      method: 'POST',
      path: '/v1/threads',
      body,
      schema: ThreadResponseSchema,
      retry: input.key !== undefined ? 'idempotent' : 'unsafe',
      ...options,
    });
    return { thread: result.body.thread, created: result.status === 201 };
  }

  /** Creates a subthread of `parentThreadId`. */
  async createSubthread(
    parentThreadId: string,
    input: { title?: string | null; key?: string } = {},
    options: CallOptions = {},
  ): Promise<{ thread: Thread; created: boolean }> {
    return this.createThread({ ...input, parentThreadId }, options);
  }

  async listThreads(options: CallOptions = {}): Promise<Thread[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/v1/threads',
      schema: ThreadListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.threads;
  }

  async getThread(threadId: string, options: CallOptions = {}): Promise<Thread> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/threads/${enc(threadId)}`,
      schema: ThreadResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.thread;
  }

  /** The thread's live grants, each with `online`: whether its principal holds an authenticated WebSocket now. */
  async listParticipants(threadId: string, options: CallOptions = {}): Promise<ParticipantGrant[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/threads/${enc(threadId)}/participants`,
      schema: ParticipantListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.grants;
  }

  /**
   * Adds `principalId` to the thread with a role (default `member`). Someone the caller can see is
   * granted at once (`status: 'granted'`; `created` is false when an equal live grant existed).
   * Anyone else, and an id that does not exist, is answered `status: 'pending'` (protocol.md,
   * Consent): a person then has an invitation to accept, and the caller is told nothing more.
   */
  async addParticipant(
    threadId: string,
    principalId: string,
    role: Role = 'member',
    options: CallOptions = {},
  ): Promise<AddParticipantResult> {
    const result = await this.#transport.request({
      method: 'POST',
      path: `/v1/threads/${enc(threadId)}/participants`,
      body: { principalId, role },
      schema: z.union([GrantResponseSchema, PendingInvitationResponseSchema]),
      // Granting what is already granted answers 200 unchanged, inviting again renews the invitation: safe to resend.
      retry: 'idempotent',
      ...options,
    });
    const body = result.body;
    if ('invitation' in body) return { status: 'pending', created: false, invitation: body.invitation };
    return { status: 'granted', grant: body.grant, created: result.status === 201 };
  }

  /** The caller's pending invitations (a person), oldest first. */
  async listInvitations(options: CallOptions = {}): Promise<Invitation[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/v1/invitations',
      schema: InvitationListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.invitations;
  }

  /**
   * Takes up the caller's invitation to the thread: the grant is made by the inviter. None pending
   * (never made, declined, expired, or void because the inviter left) answers `not_found`. Not
   * retried after an uncertain failure: a resend would answer `not_found` although the first joined.
   */
  async acceptInvitation(threadId: string, options: CallOptions = {}): Promise<Grant> {
    const { body } = await this.#transport.request({
      method: 'POST',
      path: `/v1/invitations/${enc(threadId)}/accept`,
      schema: AcceptInvitationResponseSchema,
      retry: 'unsafe',
      ...options,
    });
    return body.grant;
  }

  /** Drops the caller's invitation to the thread; the inviter is not told. None pending answers `not_found`. */
  async declineInvitation(threadId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'POST',
      path: `/v1/invitations/${enc(threadId)}/decline`,
      retry: 'unsafe',
      ...options,
    });
  }

  async removeParticipant(threadId: string, principalId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `/v1/threads/${enc(threadId)}/participants/${enc(principalId)}`,
      retry: 'idempotent',
      ...options,
    });
  }

  /**
   * Creates an invite to a thread (an owner): anyone holding its `bubble_invite_…` token may join,
   * until it expires or is used up. The plaintext is returned once. Never retried after an
   * uncertain failure (a resend would make a second invite).
   */
  async createInvite(threadId: string, input: CreateInviteInput = {}, options: CallOptions = {}): Promise<Invite> {
    const body: Record<string, unknown> = {};
    if (input.role !== undefined) body.role = input.role;
    if (input.expiresInSeconds !== undefined) body.expiresInSeconds = input.expiresInSeconds;
    if (input.maxUses !== undefined) body.maxUses = input.maxUses;
    const result = await this.#transport.request({
      method: 'POST',
      path: `/v1/threads/${enc(threadId)}/invites`,
      body,
      schema: InviteResponseSchema,
      retry: 'unsafe',
      ...options,
    });
    return result.body.invite;
  }

  /** The thread's invites (an owner), without their tokens. */
  async listInvites(threadId: string, options: CallOptions = {}): Promise<InviteInfo[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/threads/${enc(threadId)}/invites`,
      schema: InviteListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.invites;
  }

  async revokeInvite(threadId: string, inviteId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `/v1/threads/${enc(threadId)}/invites/${enc(inviteId)}`,
      retry: 'idempotent',
      ...options,
    });
  }

  /**
   * Joins the invite's thread (a human). An expired, used-up or revoked invite answers
   * `not_found`. Not retried after an uncertain failure: a resend could use a second use of a
   * multi-use invite (and, for a one-use invite, answer `not_found` although the first send joined).
   */
  async acceptInvite(token: string, options: CallOptions = {}): Promise<Grant> {
    const { body } = await this.#transport.request({
      method: 'POST',
      path: '/v1/invites/accept',
      body: { token },
      schema: AcceptInviteResponseSchema,
      retry: 'unsafe',
      ...options,
    });
    return body.grant;
  }

  /** The caller's live grants. */
  async listGrants(options: CallOptions = {}): Promise<Grant[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: '/v1/grants',
      schema: GrantListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.grants;
  }

  // Events.

  /**
   * Appends events atomically. Each event without a `clientEventId` gets a fresh one first, so the
   * append is idempotent and is retried after uncertain failures (timeout, reset, 5xx, 429).
   * `replayed` is true when the server had every event already (a 200 answer).
   */
  async appendEvents(
    threadId: string,
    events: readonly NewEvent[],
    options: CallOptions = {},
  ): Promise<{ events: EventEnvelope[]; replayed: boolean }> {
    const keyed = withClientEventIds(events);
    const result = await this.#transport.request({
      method: 'POST',
      path: `/v1/threads/${enc(threadId)}/events`,
      body: { events: keyed },
      schema: AppendResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return { events: result.body.events, replayed: result.status === 200 };
  }

  /** Appends one event; see `appendEvents`. */
  async appendEvent(threadId: string, event: NewEvent, options: CallOptions = {}): Promise<EventEnvelope> {
    const { events } = await this.appendEvents(threadId, [event], options);
    const [envelope] = events;
    if (envelope === undefined) throw new Error(`append to ${threadId} answered no envelope`);
    return envelope;
  }

  /** One page of events: after `after` (ascending), or the `limit` just below `before` (also ascending). */
  async readEvents(
    threadId: string,
    input: ReadEventsInput = {},
    options: CallOptions = {},
  ): Promise<{ events: EventEnvelope[]; headSeq: number }> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/threads/${enc(threadId)}/events`,
      query: { after: input.after, before: input.before, limit: input.limit },
      schema: ReadEventsResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body;
  }

  async getCursor(threadId: string, options: CallOptions = {}): Promise<number> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/threads/${enc(threadId)}/cursor`,
      schema: CursorResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.seq;
  }

  /** Moves the consumer cursor forward (a receipt for display, not a recovery point). */
  async putCursor(threadId: string, seq: number, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'PUT',
      path: `/v1/threads/${enc(threadId)}/cursor`,
      body: { seq },
      retry: 'idempotent',
      ...options,
    });
  }

  // Artifacts extension.

  async listArtifacts(threadId: string, options: CallOptions = {}): Promise<ArtifactSummary[]> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/threads/${enc(threadId)}/artifacts`,
      schema: ArtifactListResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.artifacts;
  }

  async getArtifact(
    threadId: string,
    name: string,
    input: { version?: number } = {},
    options: CallOptions = {},
  ): Promise<Artifact> {
    const { body } = await this.#transport.request({
      method: 'GET',
      path: `/v1/threads/${enc(threadId)}/artifacts/${enc(name)}`,
      query: { version: input.version },
      schema: ArtifactResponseSchema,
      retry: 'idempotent',
      ...options,
    });
    return body.artifact;
  }

  /**
   * Writes the next version of an artifact. With `baseVersion` the write is conditional and so
   * safe to retry (a replay that already landed answers `conflict`); without it, never retried
   * after an uncertain failure, since a resend would write a second version.
   */
  async putArtifact(
    threadId: string,
    name: string,
    input: PutArtifactInput,
    options: CallOptions = {},
  ): Promise<ArtifactSummary> {
    try {
      return await this.#putArtifactOnce(threadId, name, input, options);
    } catch (error) {
      // A conditional write that was retried after an uncertain failure may have landed on the
      // first send; the resend then answers `conflict`. If the version just above `baseVersion`
      // holds exactly what we wrote, the write happened: report it as such.
      if (!(error instanceof BubbleApiError) || error.code !== 'conflict' || input.baseVersion === undefined)
        throw error;
      const landed = await this.getArtifact(threadId, name, { version: input.baseVersion + 1 }, options).catch(
        () => undefined,
      );
      if (landed !== undefined && landed.content === input.content && landed.mediaType === input.mediaType) {
        const { content: _content, ...summary } = landed;
        return summary;
      }
      throw error;
    }
  }

  async #putArtifactOnce(
    threadId: string,
    name: string,
    input: PutArtifactInput,
    options: CallOptions,
  ): Promise<ArtifactSummary> {
    const { body } = await this.#transport.request({
      method: 'PUT',
      path: `/v1/threads/${enc(threadId)}/artifacts/${enc(name)}`,
      body: {
        content: input.content,
        mediaType: input.mediaType,
        ...(input.baseVersion !== undefined ? { baseVersion: input.baseVersion } : {}),
      },
      // The protocol leaves the answer's body open; the summary is what this client relies on.
      schema: PutArtifactResponseSchema,
      retry: input.baseVersion !== undefined ? 'idempotent' : 'unsafe',
      ...options,
    });
    return body.artifact;
  }

  // Live connection.

  /** The live connection of this client (as many WebSockets as its subscriptions need), created on first use. */
  live(): BubbleLive {
    if (this.#liveConnection === undefined) {
      if (this.#credentials === undefined) throw new Error('the live connection needs a token');
      this.#liveConnection = new BubbleLive({
        url: this.url,
        credentials: this.#credentials,
        logger: this.#logger,
        ...this.#liveOptions,
      });
    }
    return this.#liveConnection;
  }

  /**
   * Events of one thread with `seq > afterSeq`, backlog then live, exactly once and in order across
   * reconnects; `onPresence` hears its participants come online and go offline.
   */
  subscribeThread(threadId: string, options: SubscribeThreadOptions = {}): ThreadSubscription {
    return this.live().subscribeThread(threadId, options);
  }

  /** The caller's grants: the current ones as `added`, then every real change, re-synced after reconnects. */
  subscribeGrantsAsIterable(options: { signal?: AbortSignal } = {}): GrantsSubscription {
    return this.live().subscribeGrantsAsIterable(options);
  }

  /** Closes the live connection; HTTP calls keep working. */
  close(): void {
    this.#liveConnection?.close();
    this.#liveConnection = undefined;
  }
}

const PutArtifactResponseSchema = z.object({ artifact: ArtifactSummarySchema });

function enc(segment: string): string {
  return encodeURIComponent(segment);
}
