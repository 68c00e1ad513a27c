import type { Socket } from 'node:net';
import type { Grant, GrantChange, Principal, SubscribeFrame } from '@bubble/protocol';
import { assertNever, CLOSE_CODES, LIMITS } from '@bubble/protocol';
import WebSocket from 'ws';
import { budgetKeyOf } from '../domain/rate-limit-keys.js';
import { isTooManyFailures } from '../services/auth-attempts.js';
import { isRefusal } from '../services/auth-service.js';
import { errorFrame, parseClientFrame, serializeFrame, type ParsedClientFrame } from './frame-codec.js';
import { GrantsSubscription } from './grants-subscription.js';
import type { JoinedFrames } from './live-batch.js';
import { subscribeBatchCost } from './subscribe-batch.js';
import { encodeTextFrame } from './ws-frame.js';
import { ThreadSubscription } from './thread-subscription.js';
import type { ConnectionContext, SubscriptionHost } from './subscription-host.js';

export type { ConnectionContext } from './subscription-host.js';

type Subscription = ThreadSubscription | GrantsSubscription;
type Phase = 'awaiting_auth' | 'authenticating' | 'ready' | 'closed';

/** Frames a client may send between `client.auth` and `server.ready`; they are answered after it. */
const MAX_EARLY_FRAMES = 64;
/** Live subscriptions one socket may hold (each costs memory and a store read to start), however they were asked for. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = LIMITS.maxSubscriptionsPerSocket;
const PONG = serializeFrame({ type: 'pong' });
/**
 * Frames in a row a socket may send past its principal's frame budget, each
 * answered with a `rate_limited` error frame; the next one closes it with 4008
 * (protocol.md, "Limits": "then 4008 if it goes on"). A frame that is let
 * through starts the count again, so a client that slows down keeps its socket.
 */
export const MAX_REFUSED_FRAMES_IN_A_ROW = 50;
const TOKEN_EXPIRED = 'token expired: sign in again and resume from your last seq';
/** The longest one `setTimeout` waits (2^31 - 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One WebSocket: authentication, frame dispatch, its subscriptions, and its
 * outgoing queue. Frames queued in one turn are written in one write (one
 * syscall for many frames) when the hub flushes; each frame is still its own
 * WebSocket message, framed by the server itself (`ws-frame.ts`).
 *
 * Kept small on purpose (a few fields, no timers once authenticated): the
 * server holds one of these per idle client.
 */
export class Connection implements SubscriptionHost {
  principal: Principal | null = null;
  tokenId: string | null = null;
  /** When the JWT this socket authenticated with was issued (ms); null for a local token (or a JWT without `iat`). */
  jwtIssuedAt: number | null = null;
  #phase: Phase = 'awaiting_auth';
  #authTimer: NodeJS.Timeout | null;
  /** Set only on sockets authenticated with a JWT: closes them when it expires. */
  #expiryTimer: NodeJS.Timeout | null = null;
  #early: string[] | null = null;
  #revokedWhileAuthenticating: string[] | null = null;
  #jwtsRevokedWhileAuthenticating: Array<{ principalId: string; issuedBefore: number }> | null = null;
  /** Whole WebSocket messages, framed (`ws-frame.ts`); a live event's may be shared with other sockets, so never written into. */
  #outbox: Buffer[] = [];
  #outboxBytes = 0;
  #drainWaiters: Array<() => void> | null = null;
  #subscriptions: Map<string, Subscription> | null = null;
  /** The end of the chain of backlog pages: one page is read and written at a time per socket. */
  #backlogTail: Promise<unknown> = Promise.resolve();
  /** Bytes of live events this socket's subscriptions hold while they catch up (bounded like the queue). */
  heldBytes = 0;
  /** Frames refused in a row under the frame rate limit. */
  #refusedInARow = 0;
  readonly #socket: Socket;

  constructor(
    readonly ws: WebSocket,
    socket: Socket,
    readonly context: ConnectionContext,
    /** Whom failed authentications on this socket count against (protocol.md, "Limits"). */
    readonly clientAddress: string | undefined = socket.remoteAddress,
  ) {
    this.#socket = socket;
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on('close', () => this.#dispose());
    // ws closes the socket itself on protocol errors (1009 for an oversize
    // frame, 1002 for a bad one); the error only needs to be observed.
    ws.on('error', (error) => context.deps.logger.debug({ err: error }, 'websocket error'));
    this.#authTimer = setTimeout(
      () => this.close(CLOSE_CODES.notAuthenticated, 'client.auth not received in time'),
      context.authTimeoutMs,
    );
  }

  get principalId(): string {
    return this.principal?.principalId ?? '';
  }

  get isReady(): boolean {
    return this.#phase === 'ready';
  }

  /**
   * Queues an answer or acknowledgement. It counts toward the same bound as
   * live events: a client that sends requests and never reads their answers
   * (error frames included) is closed with 4008 like any slow consumer.
   */
  sendControl(text: string): void {
    if (this.#phase === 'closed') return;
    const frame = encodeTextFrame(text);
    if (this.ws.bufferedAmount + this.#outboxBytes + frame.length > this.context.maxBufferedBytes) {
      this.close(CLOSE_CODES.slowConsumer, 'slow consumer: read your answers, then resubscribe from your last seq');
      return;
    }
    this.#enqueue(frame);
  }

  /**
   * Queues a live frame. If the client is so far behind that the socket's
   * backlog would pass the limit, the socket is closed with 4008 instead and
   * `false` is returned; the client resumes from its last seq.
   */
  sendLive(message: string | Buffer): boolean {
    if (this.#phase === 'closed') return false;
    // A live event comes framed already, the same bytes for every subscriber of its batch (`live-batch.ts`).
    const frame = typeof message === 'string' ? encodeTextFrame(message) : message;
    if (this.ws.bufferedAmount + this.#outboxBytes + frame.length > this.context.maxBufferedBytes) {
      this.close(CLOSE_CODES.slowConsumer, 'slow consumer: resubscribe from your last seq');
      return false;
    }
    this.#enqueue(frame);
    return true;
  }

  /** Queues a backlog frame; the reader paces itself with `needsDrain`/`drained`. */
  sendPaced(text: string): void {
    this.sendControl(text);
  }

  needsDrain(): boolean {
    return this.#phase !== 'closed' && this.ws.bufferedAmount + this.#outboxBytes > this.context.maxBufferedBytes / 2;
  }

  /** Resolves once the socket has written out its backlog (or closed). */
  drained(): Promise<void> {
    this.flush();
    if (!this.needsDrain()) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.#drainWaiters === null) {
        this.#drainWaiters = [];
        this.#socket.once('drain', () => this.#releaseDrainWaiters());
      }
      this.#drainWaiters.push(resolve);
    });
  }

  /**
   * Runs `step` once every backlog page this socket's other subscriptions
   * asked for earlier is written: a socket holds one page at a time, however
   * many subscriptions it opens.
   */
  backlogTurn<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#backlogTail.then(step, step);
    this.#backlogTail = run.catch(() => undefined);
    return run;
  }

  /** Writes every queued frame in one write. Called by the hub's flush, with the flush's `joined` (shared by its sockets). */
  flush(joined?: JoinedFrames): void {
    if (this.#outbox.length === 0) return;
    const frames = this.#outbox;
    const bytes = this.#outboxBytes;
    this.#outbox = [];
    this.#outboxBytes = 0;
    if (this.ws.readyState !== WebSocket.OPEN) return;
    // Whole messages, framed already: one write (one syscall) for the lot, and `bufferedAmount` still counts it.
    this.#socket.write(
      frames.length === 1 ? (frames[0] as Buffer) : (joined?.join(frames, bytes) ?? Buffer.concat(frames, bytes)),
    );
  }

  close(code: number, reason: string): void {
    if (this.#phase === 'closed') return;
    this.#dispose();
    this.ws.close(code, reason);
  }

  /** Every grant change of this principal, from the hub. */
  onGrantChange(change: GrantChange, grant: Grant): void {
    if (this.#subscriptions === null) return;
    for (const subscription of [...this.#subscriptions.values()]) {
      if (subscription.kind === 'grants') subscription.onChange(change, grant);
      else if (change === 'revoked') this.track(subscription.recheck());
    }
  }

  /** Tokens revoked while `authenticate` was in flight: checked once it answers. */
  noteRevokedWhileAuthenticating(tokenIds: readonly string[]): void {
    (this.#revokedWhileAuthenticating ??= []).push(...tokenIds);
  }

  /** A person's JWTs issued before `issuedBefore` (ms) revoked while `authenticate` was in flight: checked once it answers. */
  noteJwtsRevokedWhileAuthenticating(principalId: string, issuedBefore: number): void {
    (this.#jwtsRevokedWhileAuthenticating ??= []).push({ principalId, issuedBefore });
  }

  /** Whether this socket's credential is a JWT of its principal issued before `issuedBefore` (ms). */
  isJwtIssuedBefore(issuedBefore: number): boolean {
    return this.tokenId === null && (this.jwtIssuedAt === null || this.jwtIssuedAt < issuedBefore);
  }

  forgetSubscription(subscription: { readonly id: string }): void {
    if (this.#subscriptions?.get(subscription.id) === subscription) this.#subscriptions.delete(subscription.id);
  }

  #enqueue(frame: Buffer): void {
    if (this.#outbox.length === 0) this.context.hub.scheduleFlush(this);
    this.#outbox.push(frame);
    this.#outboxBytes += frame.length;
    // A big burst goes to the socket now rather than at the end of the turn, so
    // the slow-consumer check measures what the client has not read, not the
    // size of one batch.
    if (this.#outboxBytes >= this.context.flushThresholdBytes) this.flush();
  }

  #onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    try {
      this.#handleMessage(data, isBinary);
    } catch (error) {
      // Nothing a client sends may take the server down.
      this.context.deps.logger.error({ err: error }, 'websocket frame handling failed');
      this.sendControl(errorFrame('internal', 'the frame could not be handled'));
    }
  }

  #handleMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.#phase === 'closed') return;
    if (isBinary) {
      if (this.#phase !== 'ready') this.close(CLOSE_CODES.notAuthenticated, 'the first frame must be client.auth');
      else if (this.#admit([undefined]))
        this.sendControl(errorFrame('invalid_request', 'frames must be JSON text, not binary'));
      return;
    }
    const text = rawDataToText(data);
    switch (this.#phase) {
      case 'awaiting_auth':
        this.#authenticate(text);
        return;
      case 'authenticating':
        if ((this.#early ??= []).length >= MAX_EARLY_FRAMES) {
          this.close(CLOSE_CODES.notAuthenticated, 'too many frames before server.ready');
          return;
        }
        this.#early.push(text);
        return;
      case 'ready':
        this.#handleFrame(text);
        return;
      default:
        assertNever(this.#phase, 'phase');
    }
  }

  #authenticate(text: string): void {
    const parsed = parseClientFrame(text);
    if (!parsed.ok || parsed.frame.type !== 'client.auth') {
      this.close(CLOSE_CODES.notAuthenticated, 'the first frame must be client.auth');
      return;
    }
    this.#clearAuthTimer();
    this.#phase = 'authenticating';
    const { hub, deps } = this.context;
    hub.authenticating.add(this);
    deps.authenticate(parsed.frame.token, this.clientAddress).then(
      (result) => {
        hub.authenticating.delete(this);
        if (this.#phase === 'closed') return;
        if (result === null) {
          this.close(CLOSE_CODES.notAuthenticated, 'invalid token');
          return;
        }
        if (isRefusal(result)) {
          this.close(CLOSE_CODES.notAuthenticated, closeReason(result.message));
          return;
        }
        if (isTooManyFailures(result)) {
          const seconds = result.retryAfterSeconds;
          this.#refuseAndClose(`too many failed authentications from this address; retry in ${seconds} s`, seconds);
          return;
        }
        if (result.tokenId !== null && this.#revokedWhileAuthenticating?.includes(result.tokenId)) {
          this.close(CLOSE_CODES.credentialRevoked, 'credential revoked');
          return;
        }
        const issuedAt = result.issuedAt ?? null;
        const cutOff = this.#jwtsRevokedWhileAuthenticating?.some(
          (r) =>
            result.tokenId === null &&
            r.principalId === result.principal.principalId &&
            (issuedAt === null || issuedAt < r.issuedBefore),
        );
        if (cutOff === true) {
          this.close(CLOSE_CODES.credentialRevoked, 'credential revoked');
          return;
        }
        this.#revokedWhileAuthenticating = null;
        this.#jwtsRevokedWhileAuthenticating = null;
        // The client.auth is a frame of this principal too: reconnecting in a loop draws from the same budget.
        const wait = deps.takeFrame?.(result.principal) ?? 0;
        if (wait > 0) {
          this.#refuseAndClose(`${tooManyFrames(result.principal)}; retry in ${wait} s`, wait);
          return;
        }
        if (result.acceptedUntil !== undefined && result.acceptedUntil <= Date.now()) {
          this.close(CLOSE_CODES.notAuthenticated, TOKEN_EXPIRED);
          return;
        }
        this.principal = result.principal;
        this.tokenId = result.tokenId;
        this.jwtIssuedAt = result.tokenId === null ? issuedAt : null;
        this.#phase = 'ready';
        hub.addConnection(this);
        if (result.acceptedUntil !== undefined) this.#closeAt(result.acceptedUntil);
        this.sendControl(serializeFrame({ type: 'server.ready', principal: result.principal }));
        const early = this.#early ?? [];
        this.#early = null;
        for (const frame of early) {
          if (this.#phase !== 'ready') return;
          this.#handleFrameSafely(frame);
        }
      },
      (error: unknown) => {
        hub.authenticating.delete(this);
        deps.logger.error({ err: error }, 'websocket authentication failed');
        this.close(1011, 'authentication failed');
      },
    );
  }

  #handleFrameSafely(text: string): void {
    try {
      this.#handleFrame(text);
    } catch (error) {
      this.context.deps.logger.error({ err: error }, 'websocket frame handling failed');
      this.sendControl(errorFrame('internal', 'the frame could not be handled'));
    }
  }

  #handleFrame(text: string): void {
    const parsed = parseClientFrame(text);
    // Parsed first so that a refusal names the frame's ids (a client then knows which subscribes to send again).
    if (!this.#admit(refusalIds(parsed), frameCost(parsed))) return;
    if (!parsed.ok) {
      this.sendControl(errorFrame(parsed.error.code, parsed.error.message, parsed.id, parsed.error.details));
      return;
    }
    const frame = parsed.frame;
    switch (frame.type) {
      case 'client.auth':
        this.close(CLOSE_CODES.notAuthenticated, 'already authenticated');
        return;
      case 'ping':
        this.sendControl(PONG);
        return;
      case 'subscribe':
        this.#subscribe(frame);
        return;
      case 'subscribe_batch':
        // Answered as that many subscribe frames sent in that order would be, each by its own id.
        for (const entry of frame.entries) {
          // An answer may have closed the socket (its queue past the bound): the rest go unanswered.
          if (this.#phase !== 'ready') return;
          if (entry.ok) this.#subscribe(entry.frame);
          else this.sendControl(errorFrame(entry.error.code, entry.error.message, entry.id, entry.error.details));
        }
        return;
      case 'subscribe_grants': {
        if (!this.#claimId(frame.id)) return;
        const subscription = new GrantsSubscription(this, frame.id);
        this.#subscriptions?.set(frame.id, subscription);
        this.track(subscription.start());
        return;
      }
      case 'unsubscribe':
        // Unknown ids are ignored: the server may have ended that subscription a moment ago.
        this.#subscriptions?.get(frame.id)?.end();
        return;
      default:
        // Frames come through parseClientFrame, so this is unreachable; onMessage turns the throw into an `internal` error frame.
        assertNever(frame, 'frame');
    }
  }

  /** Subscriptions catch their own failures; this is the last net, so a bug never becomes an unhandled rejection. */
  track(work: Promise<void>): void {
    work.catch((error: unknown) =>
      this.context.deps.logger.error({ err: error }, 'websocket subscription work failed'),
    );
  }

  #subscribe(frame: SubscribeFrame): void {
    if (!this.#claimId(frame.id)) return;
    const subscription = new ThreadSubscription(this, frame);
    this.#subscriptions?.set(frame.id, subscription);
    this.track(subscription.start());
  }

  #claimId(id: string): boolean {
    if (this.#subscriptions?.has(id)) {
      this.sendControl(
        errorFrame('conflict', `subscription id ${JSON.stringify(id)} is already in use on this socket`, id),
      );
      return false;
    }
    if ((this.#subscriptions?.size ?? 0) >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
      this.sendControl(
        errorFrame(
          'invalid_request',
          `at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per socket; unsubscribe first`,
          id,
          {
            limit: MAX_SUBSCRIPTIONS_PER_SOCKET,
          },
        ),
      );
      return false;
    }
    this.#subscriptions ??= new Map();
    return true;
  }

  /**
   * Takes `cost` frames from the principal's budget, all or none. Over it, the
   * frame is refused as a whole: answered with a `rate_limited` error for each
   * of `ids` (the ids it names, `undefined` for a frame without one; with
   * `details.retryAfterSeconds`), and past MAX_REFUSED_FRAMES_IN_A_ROW refused
   * frames the socket is closed with 4008.
   */
  #admit(ids: readonly (string | undefined)[], cost = 1): boolean {
    const principal = this.principal;
    const wait = principal === null ? 0 : (this.context.deps.takeFrame?.(principal, cost) ?? 0);
    if (wait === 0) {
      this.#refusedInARow = 0;
      return true;
    }
    this.#refusedInARow += 1;
    if (this.#refusedInARow > MAX_REFUSED_FRAMES_IN_A_ROW) {
      // What is queued (the refusals among it) goes out before the close frame.
      this.flush();
      this.close(CLOSE_CODES.slowConsumer, 'rate limited: slow down, then reconnect and resume from your last seq');
      return false;
    }
    const message = `${tooManyFrames(principal!)}; retry in ${wait} s`;
    for (const id of ids) {
      if (this.#phase === 'closed') break;
      this.sendControl(errorFrame('rate_limited', message, id, { retryAfterSeconds: wait }));
    }
    return false;
  }

  /** A `rate_limited` error frame, written out, then 4008. */
  #refuseAndClose(message: string, retryAfterSeconds: number): void {
    this.sendControl(errorFrame('rate_limited', message, undefined, { retryAfterSeconds }));
    this.flush();
    this.close(CLOSE_CODES.slowConsumer, 'rate limited: retry later');
  }

  /**
   * A JWT stops being accepted at its `exp` (plus the clock tolerance): the socket is closed
   * then with 4001, as an unauthenticated one, so the client signs in again and resumes from its
   * last seq. The timer is re-armed for expiries beyond what one timer can wait (about 24 days).
   */
  #closeAt(acceptedUntil: number): void {
    const wait = acceptedUntil - Date.now();
    if (wait <= 0) {
      this.close(CLOSE_CODES.notAuthenticated, TOKEN_EXPIRED);
      return;
    }
    this.#expiryTimer = setTimeout(
      () => {
        this.#expiryTimer = null;
        if (this.#phase !== 'closed') this.#closeAt(acceptedUntil);
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    this.#expiryTimer.unref();
  }

  #clearAuthTimer(): void {
    if (this.#authTimer !== null) {
      clearTimeout(this.#authTimer);
      this.#authTimer = null;
    }
  }

  #releaseDrainWaiters(): void {
    const waiters = this.#drainWaiters ?? [];
    this.#drainWaiters = null;
    for (const resolve of waiters) resolve();
  }

  /** Forgets everything about this socket; idempotent. */
  #dispose(): void {
    if (this.#phase === 'closed') return;
    const wasReady = this.#phase === 'ready';
    this.#phase = 'closed';
    this.#clearAuthTimer();
    if (this.#expiryTimer !== null) {
      clearTimeout(this.#expiryTimer);
      this.#expiryTimer = null;
    }
    this.#early = null;
    this.#outbox = [];
    this.#outboxBytes = 0;
    this.context.hub.authenticating.delete(this);
    if (wasReady) this.context.hub.removeConnection(this);
    if (this.#subscriptions !== null) {
      for (const subscription of [...this.#subscriptions.values()]) subscription.end();
      this.#subscriptions = null;
    }
    this.#releaseDrainWaiters();
  }
}

/** The ids a refusal of this frame names: each subscription of a batch, else the frame's own (if any). */
function refusalIds(parsed: ParsedClientFrame): Array<string | undefined> {
  if (!parsed.ok) return [parsed.id];
  const frame = parsed.frame;
  if (frame.type !== 'subscribe_batch') return ['id' in frame ? frame.id : undefined];
  const ids = frame.entries.flatMap((entry) => {
    const id = entry.ok ? entry.frame.id : entry.id;
    return id === undefined ? [] : [id];
  });
  return ids.length > 0 ? ids : [undefined];
}

/** Frames of the principal's budget this frame takes: a batch's cost by its size, every other frame one. */
function frameCost(parsed: ParsedClientFrame): number {
  return parsed.ok && parsed.frame.type === 'subscribe_batch' ? subscribeBatchCost(parsed.frame.entries.length) : 1;
}

function tooManyFrames(principal: Principal): string {
  const key = budgetKeyOf(principal);
  return `too many frames from ${key === principal.principalId ? key : `${principal.principalId} (counted with ${key}, who created it)`}`;
}

/** A close reason fits in 123 bytes of UTF-8 (RFC 6455); longer ones are cut at a character boundary. */
function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= 123) return text;
  let cut = text.slice(0, 120);
  while (Buffer.byteLength(`${cut}…`) > 123) cut = cut.slice(0, -1);
  return `${cut}…`;
}

function rawDataToText(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
