import type { ClientFrame, ErrorFrame, ServerFrame } from '@bubble/protocol';
import type { Logger } from 'pino';
import { fullJitterDelay, type BackoffOptions } from '../client/backoff.js';
import { isRetryableErrorCode } from '../client/retry-classification.js';
import { errorFromErrorFrame } from './live-errors.js';
import {
  GrantsSubscription,
  ThreadSubscription,
  type AnyLiveSubscription,
  type ResumeFrom,
  type SubscriptionEndReason,
  type SubscriptionHost,
} from './live-subscription.js';
import { retryAfterSecondsOf, SubscribeQueue } from './subscribe-queue.js';

/** The server frames that belong to a subscription: all but `server.ready` and `pong`. */
export type SubscriptionFrame = Exclude<ServerFrame, { type: 'server.ready' | 'pong' }>;

/** What the multiplexer needs of the connection that carries it. */
export interface MuxLink {
  /** Sends on the current socket, if one is open. */
  send(frame: ClientFrame): void;
  /** Whether the server has answered `server.ready` on the current socket. */
  isReady(): boolean;
  /** Stops reading the socket; answers false when the transport cannot (the browser). */
  pauseReading(): boolean;
  resumeReading(): void;
  /** The server confirmed a subscription: the connection works (the reconnect backoff starts over). */
  served(): void;
  /** The last subscription is gone. */
  emptied(): void;
}

/**
 * Every subscription of one socket of the live connection, and the wire ids they have on it:
 * routes the server's frames to them, re-creates them on a fresh socket, subscribes again after
 * a passing refusal, and holds back a consumer that falls behind.
 *
 * Subscribing: thread subscribes asked for in the same task (and every one a fresh socket
 * re-creates once the server is ready) go out together, as one `subscribe_batch` frame (a lone
 * one as a plain `subscribe`), or one by one to a server that does not take batches; see
 * `SubscribeQueue`. A subscribe refused as `rate_limited` is sent again after the server's
 * `retryAfterSeconds`, together with the others it refused meanwhile; it never reaches the
 * consumer as a failure. So are the subscribes of a batch refused whole (a `rate_limited` error
 * without id, from a server that does not know batches), which the queue tells apart from a
 * refused ping.
 *
 * Falling behind: each subscription buffers at most `bufferLimit` items. When one is full:
 * - where the socket has flow control (Node), reading stops until every buffer is below half.
 *   TCP pushes back on the server, which closes with 4008 if it cannot wait; the connection then
 *   resumes every subscription from its last delivered seq. The heartbeat is suspended meanwhile
 *   (a paused socket cannot read the pong).
 * - where it has none (the browser), that one subscription is parked: unsubscribed on the wire,
 *   keeping its buffer, while the socket and every other subscription go on (so the heartbeat
 *   never stops). Frames still in flight for its old wire id are dropped, unread. Once its
 *   consumer has read half the buffer, it subscribes again after the last seq it buffered, and
 *   the protocol's replay (`afterSeq`) sends the rest: nothing lost, nothing twice (seqs are
 *   checked on arrival), and memory stays bounded however far behind the consumer is. A grants
 *   stream parks the same way: its new snapshot is diffed with what it reported.
 */
export class SubscriptionMux implements SubscriptionHost {
  readonly #subscriptions = new Set<AnyLiveSubscription>();
  /** Wire id to subscription, for the current socket only. */
  readonly #wire = new Map<string, AnyLiveSubscription>();
  readonly #wireIdOf = new Map<AnyLiveSubscription, string>();
  #nextWireId = 0;
  /** Subscribes refused for a passing reason, by how often in a row. */
  readonly #refusals = new Map<AnyLiveSubscription, number>();
  readonly #resubscribeTimers = new Set<ReturnType<typeof setTimeout>>();
  /** Thread subscribes on their way out, batched. */
  readonly #subscribes: SubscribeQueue;
  /** Subscriptions refused as `rate_limited`, waiting together for the server's `retryAfterSeconds`. */
  readonly #rateLimited = new Set<AnyLiveSubscription>();
  #rateLimitTimer: ReturnType<typeof setTimeout> | undefined;
  #rateLimitUntil = 0;
  /** Reading is paused for a consumer that is behind (transports with flow control). */
  #paused = false;
  /** Unsubscribed while their consumers catch up (transports without flow control). */
  readonly #parked = new Set<AnyLiveSubscription>();
  readonly #link: MuxLink;
  readonly #logger: Logger;
  readonly #backoff: BackoffOptions;
  readonly #random: () => number;

  constructor(link: MuxLink, logger: Logger, backoff: BackoffOptions, random: () => number) {
    this.#link = link;
    this.#logger = logger;
    this.#backoff = backoff;
    this.#random = random;
    this.#subscribes = new SubscribeQueue(
      {
        send: (frame) => link.send(frame),
        isReady: () => link.isReady(),
        isWanted: (wireId) => this.#wire.has(wireId),
      },
      logger,
    );
  }

  get size(): number {
    return this.#subscriptions.size;
  }

  add(subscription: AnyLiveSubscription): void {
    this.#subscriptions.add(subscription);
    if (this.#link.isReady()) this.#subscribeOnWire(subscription, 'delivered');
  }

  /** The server is ready on a fresh socket: every subscription is created again (in batches), but those catching up. */
  subscribeAll(): void {
    for (const subscription of this.#subscriptions)
      if (!this.#parked.has(subscription)) this.#subscribeOnWire(subscription, 'delivered');
    this.#subscribes.flush();
  }

  /**
   * The heartbeat's ping, sent now, before the subscribes that wait; the queue keeps it in the
   * order of the frames without an id, to tell whose an answer without an id is (`SubscribeQueue`).
   */
  ping(): void {
    this.#subscribes.ping();
    this.#link.send({ type: 'ping' });
  }

  pong(): void {
    this.#subscribes.pong();
  }

  /** The socket is gone: its wire ids, its pause and the (re)subscribes planned on it go with it. */
  socketLost(): void {
    this.#paused = false;
    this.#wire.clear();
    this.#wireIdOf.clear();
    for (const timer of this.#resubscribeTimers) clearTimeout(timer);
    this.#resubscribeTimers.clear();
    this.#subscribes.reset();
    this.#rateLimited.clear();
    clearTimeout(this.#rateLimitTimer);
    this.#rateLimitTimer = undefined;
  }

  /** Ends every iteration with `error` (after what each buffered) and forgets them all. */
  failAll(error: unknown): void {
    for (const subscription of this.#subscriptions) subscription.fail(error);
    this.#forgetAll();
  }

  /** Ends every iteration normally and forgets them all. */
  endAll(reason: SubscriptionEndReason): void {
    for (const subscription of this.#subscriptions) subscription.end(reason);
    this.#forgetAll();
  }

  route(frame: SubscriptionFrame): void {
    switch (frame.type) {
      case 'subscribed': {
        this.#subscribes.answered(frame.id);
        const subscription = this.#wire.get(frame.id);
        if (subscription !== undefined) this.#served(subscription);
        if (subscription instanceof ThreadSubscription) subscription.onSubscribed(frame.headSeq);
        return;
      }
      case 'event': {
        const subscription = this.#wire.get(frame.id);
        if (!(subscription instanceof ThreadSubscription)) return;
        if (subscription.accept(frame.event) === 'gap') {
          this.#send({ type: 'unsubscribe', id: frame.id });
          this.#forgetWire(subscription);
          this.#subscribeOnWire(subscription, 'delivered');
        }
        this.#checkBackpressure(subscription);
        return;
      }
      case 'grant': {
        const subscription = this.#wire.get(frame.id);
        if (!(subscription instanceof GrantsSubscription)) return;
        subscription.accept(frame.change, frame.grant);
        this.#checkBackpressure(subscription);
        return;
      }
      case 'grants_synced': {
        const subscription = this.#wire.get(frame.id);
        if (subscription === undefined) return;
        this.#served(subscription);
        if (subscription instanceof GrantsSubscription) subscription.acceptSynced();
        this.#checkBackpressure(subscription);
        return;
      }
      case 'subscription_ended': {
        const subscription = this.#wire.get(frame.id);
        if (subscription === undefined) return;
        this.#logger.info({ reason: frame.reason }, 'subscription ended by the server');
        this.#forget(subscription);
        subscription.end({ kind: 'server', reason: frame.reason });
        if (this.#subscriptions.size === 0) this.#link.emptied();
        return;
      }
      case 'error': {
        if (frame.id === undefined) {
          this.#refusedWithoutId(frame);
          return;
        }
        this.#subscribes.answered(frame.id, frame);
        const subscription = this.#wire.get(frame.id);
        if (subscription === undefined) {
          this.#logger.warn({ code: frame.error.code, message: frame.error.message }, 'error frame from the server');
          return;
        }
        this.#forgetWire(subscription);
        if (frame.error.code === 'rate_limited') {
          this.#retryWhenAllowed(subscription, frame);
          return;
        }
        if (isRetryableErrorCode(frame.error.code)) {
          this.#resubscribeLater(subscription, frame.error.code);
          return;
        }
        this.#forget(subscription);
        subscription.fail(errorFromErrorFrame(frame));
        if (this.#subscriptions.size === 0) this.#link.emptied();
        return;
      }
      case 'presence': {
        // Not an event (no seq, not buffered): handed to the subscription's `onPresence` as it comes.
        const subscription = this.#wire.get(frame.id);
        if (subscription instanceof ThreadSubscription) subscription.acceptPresence(frame.principalId, frame.online);
        return;
      }
      default:
        // Frames come through ServerFrameSchema, so this is unreachable; a frame that slipped past is logged, not thrown.
        this.#logger.debug({ frame: frame satisfies never }, 'unhandled frame');
    }
  }

  // SubscriptionHost.

  release(subscription: AnyLiveSubscription): void {
    if (!this.#subscriptions.has(subscription)) return;
    const wireId = this.#wireIdOf.get(subscription);
    this.#forget(subscription);
    // A subscribe still waiting to go out is taken back: the server never hears of it.
    if (wireId !== undefined && this.#link.isReady() && !this.#subscribes.withdraw(wireId))
      this.#send({ type: 'unsubscribe', id: wireId });
    if (this.#subscriptions.size === 0) this.#link.emptied();
    else this.drained(subscription);
  }

  drained(subscription: AnyLiveSubscription): void {
    if (this.#parked.has(subscription) && subscription.isBelowLowWater) {
      this.#parked.delete(subscription);
      // Not ready: the next `server.ready` subscribes it with the others.
      if (this.#link.isReady() && this.#subscriptions.has(subscription)) {
        this.#logger.debug({ subscription: subscription.localId }, 'consumer caught up; subscribing again');
        this.#subscribeOnWire(subscription, 'buffered');
      }
    }
    if (!this.#paused) return;
    for (const each of this.#subscriptions) if (!each.isBelowLowWater) return;
    this.#paused = false;
    this.#logger.debug('consumers caught up; reading resumes');
    this.#link.resumeReading();
  }

  // Inside.

  #checkBackpressure(subscription: AnyLiveSubscription): void {
    if (this.#paused || !subscription.isFull) return;
    if (this.#link.pauseReading()) {
      this.#paused = true;
      this.#logger.warn({ subscription: subscription.localId }, 'a consumer is behind; reading paused');
      return;
    }
    const wireId = this.#wireIdOf.get(subscription);
    if (wireId === undefined) return;
    this.#send({ type: 'unsubscribe', id: wireId });
    this.#forgetWire(subscription);
    this.#parked.add(subscription);
    this.#logger.warn(
      { subscription: subscription.localId },
      'a consumer is behind; its subscription waits until it catches up',
    );
  }

  /**
   * An error frame without id: about a batch (refused whole: its subscriptions go again after the
   * server's wait when rate limited, after a backoff otherwise; or not known to the server: the
   * queue sends one subscribe each), or about nothing we subscribe (a refused ping), only logged.
   */
  #refusedWithoutId(frame: ErrorFrame): void {
    const refused = this.#subscribes.answeredWithoutId(frame);
    if (refused === null) {
      this.#logger.warn({ code: frame.error.code, message: frame.error.message }, 'error frame from the server');
      return;
    }
    for (const wireId of refused) {
      const subscription = this.#wire.get(wireId);
      if (subscription === undefined) continue;
      this.#forgetWire(subscription);
      if (frame.error.code === 'rate_limited') this.#retryWhenAllowed(subscription, frame);
      else this.#resubscribeLater(subscription, frame.error.code);
    }
  }

  /** The server confirmed a subscription: the connection works, so the backoff starts over. */
  #served(subscription: AnyLiveSubscription): void {
    this.#refusals.delete(subscription);
    this.#link.served();
  }

  /**
   * A subscribe the server refused for a passing reason (`internal`) is tried again on the same
   * socket after a backoff of its own; a reconnect in between re-subscribes it anyway.
   */
  #resubscribeLater(subscription: AnyLiveSubscription, code: string): void {
    const attempt = this.#refusals.get(subscription) ?? 0;
    this.#refusals.set(subscription, attempt + 1);
    const delayMs = fullJitterDelay(attempt, this.#backoff, this.#random);
    this.#logger.warn(
      { subscription: subscription.localId, code, attempt: attempt + 1, delayMs },
      'subscribe refused for now; trying again',
    );
    const timer = setTimeout(() => {
      this.#resubscribeTimers.delete(timer);
      if (this.#link.isReady() && this.#subscriptions.has(subscription) && !this.#wireIdOf.has(subscription))
        this.#subscribeOnWire(subscription, 'delivered');
    }, delayMs);
    this.#resubscribeTimers.add(timer);
  }

  /**
   * A subscribe refused as `rate_limited` waits for the server's `retryAfterSeconds` (with up to a
   * tenth more, so that sockets refused together do not all come back at once), with every other
   * one refused meanwhile, and they go again in one batch. A reconnect in between re-subscribes
   * them anyway.
   */
  #retryWhenAllowed(subscription: AnyLiveSubscription, frame: ErrorFrame): void {
    const seconds = retryAfterSecondsOf(frame);
    this.#rateLimited.add(subscription);
    const until = Date.now() + seconds * 1000 * (1 + this.#random() / 10);
    if (this.#rateLimitTimer !== undefined && until <= this.#rateLimitUntil) return;
    this.#logger.warn(
      { subscription: subscription.localId, retryAfterSeconds: seconds, waiting: this.#rateLimited.size },
      'subscribe refused for now (rate limited); trying again after the wait the server gave',
    );
    clearTimeout(this.#rateLimitTimer);
    this.#rateLimitUntil = until;
    this.#rateLimitTimer = setTimeout(() => {
      this.#rateLimitTimer = undefined;
      const due = [...this.#rateLimited];
      this.#rateLimited.clear();
      if (!this.#link.isReady()) return;
      for (const each of due)
        if (this.#subscriptions.has(each) && !this.#wireIdOf.has(each)) this.#subscribeOnWire(each, 'delivered');
      this.#subscribes.flush();
    }, until - Date.now());
  }

  #subscribeOnWire(subscription: AnyLiveSubscription, from: ResumeFrom): void {
    if (subscription.isOver) return;
    const wireId = `s${(this.#nextWireId += 1)}`;
    this.#wire.set(wireId, subscription);
    this.#wireIdOf.set(subscription, wireId);
    const frame = subscription.subscribeFrame(wireId, from);
    if (frame.type === 'subscribe') this.#subscribes.add(frame);
    else this.#send(frame);
  }

  /** Sends `frame` after the subscribes that wait, so the server sees frames in the order they were asked for. */
  #send(frame: ClientFrame): void {
    this.#subscribes.flush();
    this.#link.send(frame);
  }

  #forgetWire(subscription: AnyLiveSubscription): void {
    const wireId = this.#wireIdOf.get(subscription);
    if (wireId !== undefined) this.#wire.delete(wireId);
    this.#wireIdOf.delete(subscription);
  }

  #forget(subscription: AnyLiveSubscription): void {
    this.#forgetWire(subscription);
    this.#subscriptions.delete(subscription);
    this.#refusals.delete(subscription);
    this.#parked.delete(subscription);
    this.#rateLimited.delete(subscription);
  }

  #forgetAll(): void {
    this.#subscriptions.clear();
    this.#refusals.clear();
    this.#parked.clear();
    this.#rateLimited.clear();
  }
}
