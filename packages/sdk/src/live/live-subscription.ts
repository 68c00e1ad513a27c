import type { EventEnvelope, Grant, SubscribeFrame, SubscribeGrantsFrame } from '@bubble/protocol';
import type { Logger } from 'pino';
import { diffGrants, sameGrant, type GrantUpdate } from './grants-diff.js';

/**
 * Told of every `presence` frame of a thread subscription: `principalId`, a participant of the
 * thread, came online (its first WebSocket authenticated) or went offline (its last one closed).
 */
export type PresenceListener = (principalId: string, online: boolean) => void;

/** How `subscribeThread` subscribes. */
export interface SubscribeThreadOptions {
  /** Events with `seq > afterSeq` (default 0: the whole thread). */
  afterSeq?: number;
  signal?: AbortSignal;
  /**
   * Presence changes of the thread's participants, from the moment the server confirms the
   * subscription: read `listParticipants` (each grant's `online`) for where they stand, then
   * apply these. Changes while the connection is down are not replayed: after a reconnect, read
   * the participants again.
   */
  onPresence?: PresenceListener;
}

/** Why a subscription's iteration ended without an error. */
export type SubscriptionEndReason =
  /** The server ended it (`subscription_ended`), e.g. `grant_revoked` or `thread_deleted`. */
  | { readonly kind: 'server'; readonly reason: string }
  /** The consumer stopped: `break`, `return()`, or `unsubscribe()`. */
  | { readonly kind: 'unsubscribed' }
  /** The caller's signal aborted. */
  | { readonly kind: 'aborted' }
  /** The live connection was closed by its owner. */
  | { readonly kind: 'closed' };

/** What a subscription needs from the connection that feeds it. */
export interface SubscriptionHost {
  /** The subscription is over: forget it and tell the server. */
  release(subscription: AnyLiveSubscription): void;
  /** The subscription's buffer fell below its low-water mark: reading (or its own feed) may resume. */
  drained(subscription: AnyLiveSubscription): void;
}

/**
 * Where a (re-)subscribe resumes: after the last item the consumer was handed, dropping the
 * buffer (a fresh socket: the server sends it all again), or after the last item buffered,
 * keeping the buffer (a subscription that was unsubscribed while its consumer caught up).
 */
export type ResumeFrom = 'delivered' | 'buffered';

/**
 * A single-consumer async iterable fed by the live connection, with a bounded buffer. The
 * subscription is its own iterator: iterate it once.
 */
export abstract class LiveSubscription<T> implements AsyncIterableIterator<T> {
  /** The reason iteration ended, once it has; `undefined` while it runs or after an error. */
  endReason: SubscriptionEndReason | undefined;
  protected readonly queue: T[] = [];
  #waiter: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  #failure: { error: unknown } | undefined;
  #finished = false;
  readonly #bufferLimit: number;
  readonly #host: SubscriptionHost;
  #detachSignal: (() => void) | undefined;

  constructor(
    readonly localId: string,
    host: SubscriptionHost,
    protected readonly logger: Logger,
    bufferLimit: number,
    signal: AbortSignal | undefined,
  ) {
    this.#host = host;
    this.#bufferLimit = bufferLimit;
    if (signal !== undefined) {
      if (signal.aborted) queueMicrotask(() => this.#stop({ kind: 'aborted' }));
      else {
        const onAbort = (): void => this.#stop({ kind: 'aborted' });
        signal.addEventListener('abort', onAbort, { once: true });
        this.#detachSignal = () => signal.removeEventListener('abort', onAbort);
      }
    }
  }

  /** The frame that (re)creates this subscription under a new wire id. */
  abstract subscribeFrame(wireId: string, from?: ResumeFrom): SubscribeFrame | SubscribeGrantsFrame;

  get isOver(): boolean {
    return this.#finished || this.#failure !== undefined;
  }

  /** Whether the buffer is at its bound, so the connection should stop reading. */
  get isFull(): boolean {
    return this.queue.length >= this.#bufferLimit;
  }

  get isBelowLowWater(): boolean {
    return this.queue.length <= Math.floor(this.#bufferLimit / 2);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) {
      const value = this.queue.shift() as T;
      this.delivered(value);
      if (this.isBelowLowWater) this.#host.drained(this as unknown as AnyLiveSubscription);
      return Promise.resolve({ value, done: false });
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure.error);
    if (this.#finished) return Promise.resolve({ value: undefined, done: true });
    if (this.#waiter !== undefined)
      return Promise.reject(new Error('a live subscription has one consumer: await each next() before the next'));
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /** Stops the subscription (what `break` in `for await` calls). */
  return(): Promise<IteratorResult<T>> {
    this.#stop({ kind: 'unsubscribed' });
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Stops the subscription; same as `return()`. */
  unsubscribe(): void {
    this.#stop({ kind: 'unsubscribed' });
  }

  /** Ends iteration normally: buffered items are still delivered first. */
  end(reason: SubscriptionEndReason): void {
    if (this.isOver) return;
    this.#finished = true;
    this.endReason = reason;
    this.#detachSignal?.();
    this.#flushWaiter();
  }

  /** Ends iteration with an error, after the buffered items. */
  fail(error: unknown): void {
    if (this.isOver) return;
    this.#failure = { error };
    this.#detachSignal?.();
    this.#flushWaiter();
  }

  #stop(reason: SubscriptionEndReason): void {
    if (this.isOver) return;
    // Whatever is buffered will not be wanted: the consumer asked to stop.
    this.queue.length = 0;
    this.end(reason);
    this.#host.release(this as unknown as AnyLiveSubscription);
  }

  /** Hands an item to the consumer, or buffers it. */
  protected push(value: T): void {
    if (this.#waiter !== undefined) {
      const { resolve } = this.#waiter;
      this.#waiter = undefined;
      this.delivered(value);
      resolve({ value, done: false });
      return;
    }
    this.queue.push(value);
  }

  /** Called when an item reaches the consumer. */
  protected abstract delivered(value: T): void;

  #flushWaiter(): void {
    if (this.#waiter === undefined || this.queue.length > 0) return;
    const { resolve, reject } = this.#waiter;
    this.#waiter = undefined;
    if (this.#failure !== undefined) reject(this.#failure.error);
    else resolve({ value: undefined, done: true });
  }
}

/**
 * The events of one thread. Delivers each seq exactly once and in order; after a reconnect it is
 * re-created after the last seq it delivered, and anything it had buffered but not delivered is
 * dropped (the server sends it again). Re-created to catch up after falling behind, it keeps its
 * buffer and resumes after the last seq it buffered.
 */
export class ThreadSubscription extends LiveSubscription<EventEnvelope> {
  /** The highest seq handed to the consumer. */
  lastDeliveredSeq: number;
  /** The highest seq accepted into the buffer (or delivered). */
  #lastAcceptedSeq: number;
  /** The thread's head when the server last confirmed the subscription. */
  headSeqAtSubscribe: number | undefined;
  readonly #onPresence: PresenceListener | undefined;

  constructor(
    localId: string,
    readonly threadId: string,
    afterSeq: number,
    host: SubscriptionHost,
    logger: Logger,
    bufferLimit: number,
    signal: AbortSignal | undefined,
    onPresence?: PresenceListener,
  ) {
    super(localId, host, logger, bufferLimit, signal);
    this.lastDeliveredSeq = afterSeq;
    this.#lastAcceptedSeq = afterSeq;
    this.#onPresence = onPresence;
  }

  subscribeFrame(wireId: string, from: ResumeFrom = 'delivered'): SubscribeFrame {
    if (from === 'delivered') {
      // Resume after what the consumer has seen; what was buffered is sent again.
      this.queue.length = 0;
      this.#lastAcceptedSeq = this.lastDeliveredSeq;
    }
    return { type: 'subscribe', id: wireId, threadId: this.threadId, afterSeq: this.#lastAcceptedSeq };
  }

  onSubscribed(headSeq: number): void {
    this.headSeqAtSubscribe = headSeq;
  }

  /** Takes one event from the server. Answers `gap` when a seq is missing, so the caller re-subscribes. */
  accept(event: EventEnvelope): 'ok' | 'duplicate' | 'gap' {
    if (this.isOver) return 'ok';
    if (event.threadId !== this.threadId) {
      this.logger.warn(
        { threadId: this.threadId, eventThreadId: event.threadId, seq: event.seq },
        'event of another thread on a thread subscription; ignored',
      );
      return 'duplicate';
    }
    if (event.seq <= this.#lastAcceptedSeq) {
      this.logger.debug({ threadId: this.threadId, seq: event.seq }, 'duplicate event dropped');
      return 'duplicate';
    }
    if (event.seq !== this.#lastAcceptedSeq + 1) {
      this.logger.error(
        { threadId: this.threadId, expected: this.#lastAcceptedSeq + 1, got: event.seq },
        'gap in the event stream; re-subscribing',
      );
      return 'gap';
    }
    this.#lastAcceptedSeq = event.seq;
    this.push(event);
    return 'ok';
  }

  /**
   * A `presence` frame: a participant came online or went offline. It is no event (no seq, never
   * buffered, not counted against the buffer): it goes to `onPresence` as it arrives, in any order
   * against the events. A listener that throws is logged and does not end the subscription.
   */
  acceptPresence(principalId: string, online: boolean): void {
    if (this.isOver || this.#onPresence === undefined) return;
    try {
      this.#onPresence(principalId, online);
    } catch (error) {
      this.logger.warn({ err: error, threadId: this.threadId, principalId }, 'onPresence threw; ignored');
    }
  }

  protected delivered(event: EventEnvelope): void {
    this.lastDeliveredSeq = event.seq;
  }
}

/**
 * The caller's grants: first every live grant as `added`, then real changes only. On a reconnect
 * it takes the server's fresh snapshot and reports just the difference from what it reported.
 */
export class GrantsSubscription extends LiveSubscription<GrantUpdate> {
  /** What the consumer has been told (or will be told from the buffer), by thread id. */
  readonly #reported = new Map<string, Grant>();
  #snapshot: Map<string, Grant> | undefined;
  #syncedOnce = false;
  readonly #syncedWaiters: Array<() => void> = [];

  /** Always a fresh snapshot, diffed against what was reported (buffered or not), wherever it resumes. */
  subscribeFrame(wireId: string): SubscribeGrantsFrame {
    this.#snapshot = new Map();
    return { type: 'subscribe_grants', id: wireId };
  }

  /** Resolves once the first snapshot has been taken (its grants are then in the stream). */
  whenSynced(): Promise<void> {
    if (this.#syncedOnce) return Promise.resolve();
    return new Promise((resolve) => this.#syncedWaiters.push(resolve));
  }

  /** The grants as currently reported, by thread id. */
  current(): ReadonlyMap<string, Grant> {
    return this.#reported;
  }

  accept(change: 'added' | 'revoked', grant: Grant): void {
    if (this.isOver) return;
    if (this.#snapshot !== undefined) {
      if (change === 'added') this.#snapshot.set(grant.threadId, grant);
      else this.#snapshot.delete(grant.threadId);
      return;
    }
    const known = this.#reported.get(grant.threadId);
    if (change === 'added') {
      if (known !== undefined && sameGrant(known, grant)) return;
      this.#reported.set(grant.threadId, grant);
      this.push({ change, grant });
    } else {
      if (known === undefined) return;
      this.#reported.delete(grant.threadId);
      this.push({ change, grant });
    }
  }

  acceptSynced(): void {
    if (this.isOver || this.#snapshot === undefined) return;
    const updates = diffGrants(this.#reported, this.#snapshot);
    this.#snapshot = undefined;
    for (const update of updates) {
      if (update.change === 'added') this.#reported.set(update.grant.threadId, update.grant);
      else this.#reported.delete(update.grant.threadId);
      this.push(update);
    }
    if (!this.#syncedOnce) {
      this.#syncedOnce = true;
      for (const resolve of this.#syncedWaiters.splice(0)) resolve();
    }
  }

  protected delivered(): void {
    // Grants are tracked when accepted, not when delivered: the snapshot diff is against what
    // the stream has committed to report, buffered or not.
  }
}

/** Every kind of subscription the live connection multiplexes. */
export type AnyLiveSubscription = ThreadSubscription | GrantsSubscription;
