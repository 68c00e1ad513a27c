import { SUBSCRIPTION_END_REASONS, type EventEnvelope, type Grant } from '@bubble/protocol';
import type { Logger } from 'pino';
import type { BubbleClient } from '../client/bubble-client.js';
import type { ThreadSubscription } from '../live/live-subscription.js';
import { fullJitterDelay } from '../client/backoff.js';
import { isPermanentFailure } from '../client/retry-classification.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { BacklogPolicy } from './replay-window.js';
import { resolveReplayStart } from './resolve-replay-start.js';

/** What the runtime needs of a client over HTTP (`listThreads`, where there is one, saves a read per thread at boot). */
export type BotRuntimeClient = Pick<BubbleClient, 'getThread' | 'readEvents' | 'putCursor'> &
  Partial<Pick<BubbleClient, 'listThreads'>>;
/** What the runtime needs of the live connection (a `BubbleClient` has both). */
export type BotRuntimeLive = Pick<BubbleClient, 'subscribeThread' | 'subscribeGrantsAsIterable'>;

/** Why a thread's handler was stopped. */
export type ThreadStopReason =
  /** The bot's grant on the thread was revoked. */
  | 'revoked'
  /** The runtime is stopping. */
  | 'runtime_stopped'
  /** The bot let go of the thread (`BotRuntime.release`), keeping its grant. */
  | 'released'
  /** The server ended the subscription (e.g. `grant_revoked`, `thread_deleted`). */
  | 'subscription_ended'
  /** The thread could not be read and retrying cannot help (e.g. 403, 404, a revoked credential). */
  | 'failed';

/** What a handler is given about its thread. */
export interface ThreadContext<C extends BotRuntimeClient = BotRuntimeClient> {
  readonly threadId: string;
  /** The grant that started the thread. */
  readonly grant: Grant;
  readonly principalId: string;
  /** The client the runtime was given (a full `BubbleClient` when that is what it got). */
  readonly client: C;
  /** A child logger carrying `threadId`. */
  readonly logger: Logger;
  /** Aborted when the thread stops. */
  readonly signal: AbortSignal;
  /** Events are delivered with `seq > startAfterSeq`. */
  readonly startAfterSeq: number;
  /** The checkpoint the start was chosen from (null: none, so `onFirstJoin` applied). */
  readonly checkpoint: number | null;
  /**
   * Records that every event up to `seq` is handled: after a restart, reading resumes after the
   * highest settled seq. `seq` may not exceed the last delivered event; lower values are ignored.
   */
  settle(seq: number): Promise<void>;
}

/** One thread's consumer. Gets each event once, in seq order, one at a time. */
export interface ThreadHandler {
  onEvent(event: EventEnvelope): Promise<void> | void;
  /** Called once when the thread stops, after the last `onEvent` returned. */
  stop?(reason: ThreadStopReason): Promise<void> | void;
}

export type ThreadHandlerFactory<C extends BotRuntimeClient = BotRuntimeClient> = (
  context: ThreadContext<C>,
) => ThreadHandler | Promise<ThreadHandler>;

export interface ThreadRunnerConfig<C extends BotRuntimeClient = BotRuntimeClient> {
  readonly grant: Grant;
  readonly principalId: string;
  readonly client: C;
  readonly live: BotRuntimeLive;
  readonly checkpoints: CheckpointStore;
  readonly policy: BacklogPolicy;
  readonly handlerFactory: ThreadHandlerFactory<C>;
  readonly logger: Logger;
  readonly cursorReceipts: boolean;
  readonly retryBaseMs: number;
  readonly retryCapMs: number;
  /** Called once the runner has ended, whatever the reason. */
  readonly onEnded?: (runner: ThreadRunner<C>, reason: ThreadStopReason) => void;
  /**
   * Waits for a turn to start (read the checkpoint, the head, the replay window; make the
   * handler), so a boot with thousands of threads starts a few at a time. Resolves with the
   * release. Default: no wait.
   */
  readonly startTurn?: (signal: AbortSignal) => Promise<() => void>;
  /** The thread's head as a recent listing of every thread gave it, if that is known; saves a read. */
  readonly listedHead?: (threadId: string) => Promise<number | undefined>;
}

const RECEIPT_GRACE_MS = 2_000;

/**
 * Runs one thread: picks the replay start, then follows the thread (backlog then live) and hands
 * events to its handler exactly once and in order, until stopped.
 */
export class ThreadRunner<C extends BotRuntimeClient = BotRuntimeClient> {
  readonly threadId: string;
  readonly #abort = new AbortController();
  /** Receipts get a short grace at stop, then are abandoned: they are only receipts. */
  readonly #receiptAbort = new AbortController();
  readonly #logger: Logger;
  #stopReason: ThreadStopReason | undefined;
  #ended = false;
  #lastDelivered = 0;
  #lastSettled = -1;
  #receiptInFlight: Promise<void> | undefined;
  #receiptPending: number | undefined;
  #running: Promise<void> | undefined;
  #handler: ThreadHandler | undefined;
  #subscription: ThreadSubscription | undefined;
  readonly #config: ThreadRunnerConfig<C>;

  constructor(config: ThreadRunnerConfig<C>) {
    this.#config = config;
    this.threadId = config.grant.threadId;
    this.#logger = config.logger.child({ threadId: this.threadId });
  }

  get grant(): Grant {
    return this.#config.grant;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /** Whether the server has confirmed the thread's subscription (the thread is followed live). */
  get following(): boolean {
    return this.#subscription?.headSeqAtSubscribe !== undefined;
  }

  /** Whether the runner has ended (stopped, or failed for good). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Stops reading; resolves once the handler's `stop` has returned. */
  async stop(reason: ThreadStopReason): Promise<void> {
    this.#stopReason ??= reason;
    this.#abort.abort();
    await this.#running;
  }

  get #stopping(): boolean {
    return this.#abort.signal.aborted;
  }

  async #run(): Promise<void> {
    let endReason: ThreadStopReason = 'runtime_stopped';
    try {
      for (let attempt = 0; !this.#stopping; attempt += 1) {
        try {
          await this.#follow();
          endReason = this.#stopReason ?? 'subscription_ended';
          break;
        } catch (error) {
          if (this.#stopping) break;
          // A refusal that another try cannot change (403, 404, a revoked credential) ends the thread.
          if (isPermanentFailure(error)) {
            this.#logger.error({ err: error }, 'thread cannot be read; stopping it');
            endReason = 'failed';
            break;
          }
          const delayMs = fullJitterDelay(
            attempt,
            { baseMs: this.#config.retryBaseMs, capMs: this.#config.retryCapMs },
            Math.random,
          );
          this.#logger.warn({ err: error, attempt, delayMs }, 'thread start failed; retrying');
          await this.#sleep(delayMs);
        }
      }
    } finally {
      endReason = this.#stopReason ?? endReason;
      this.#abort.abort();
      if (this.#receiptInFlight !== undefined) {
        const grace = setTimeout(() => this.#receiptAbort.abort(), RECEIPT_GRACE_MS);
        await this.#receiptInFlight.catch(() => undefined);
        clearTimeout(grace);
      }
      if (this.#handler?.stop) {
        try {
          await this.#handler.stop(endReason);
        } catch (error) {
          this.#logger.error({ err: error }, 'thread handler stop failed');
        }
      }
      this.#logger.info({ reason: endReason, lastDelivered: this.#lastDelivered }, 'thread stopped');
      this.#ended = true;
      this.#config.onEnded?.(this, endReason);
    }
  }

  /** Picks the start (first time only), then follows the thread until its subscription ends. */
  async #follow(): Promise<void> {
    const { client, live, policy } = this.#config;
    let handler = this.#handler;
    if (handler === undefined) {
      const release = (await this.#config.startTurn?.(this.#abort.signal)) ?? (() => undefined);
      try {
        if (this.#stopping) return;
        const { joinedSeq } = this.#config.grant;
        const checkpoint = await this.#readCheckpoint(joinedSeq);
        // A listed head is good only if it saw the grant and the checkpoint (else the thread moved since).
        const listed = await this.#config.listedHead?.(this.threadId);
        const headSeq =
          listed !== undefined && listed >= joinedSeq && listed >= (checkpoint ?? 0)
            ? listed
            : (await client.getThread(this.threadId, { signal: this.#abort.signal })).headSeq;
        const start = await resolveReplayStart(client, {
          threadId: this.threadId,
          checkpoint,
          joinedSeq,
          headSeq,
          policy,
          signal: this.#abort.signal,
        });
        this.#lastDelivered = start.afterSeq;
        this.#logger.info(
          { checkpoint, headSeq, afterSeq: start.afterSeq, rule: start.rule, expandedBy: start.expandedBy },
          'thread starts',
        );
        handler = await this.#config.handlerFactory(this.#context(checkpoint, start.afterSeq));
        this.#handler = handler;
      } finally {
        release();
      }
    }
    const subscription = live.subscribeThread(this.threadId, {
      afterSeq: this.#lastDelivered,
      signal: this.#abort.signal,
    });
    this.#subscription = subscription;
    for await (const event of subscription) {
      if (this.#stopping) break;
      await this.#take(handler, event);
    }
    if (!this.#stopping && subscription.endReason?.kind === 'server') {
      const reason = subscription.endReason.reason;
      this.#logger.info({ reason }, 'the server ended the thread subscription');
      // The live stream may learn of a revocation before the grants stream does: same outcome.
      this.#stopReason ??= reason === SUBSCRIPTION_END_REASONS.grantRevoked ? 'revoked' : 'subscription_ended';
    }
  }

  /** Delivers one event, guarding order: a repeat is dropped, a gap is filled over HTTP first. */
  async #take(handler: ThreadHandler, event: EventEnvelope): Promise<void> {
    if (event.seq <= this.#lastDelivered) {
      this.#logger.warn(
        { seq: event.seq, lastDelivered: this.#lastDelivered },
        'event delivered twice by the stream; dropped',
      );
      return;
    }
    while (event.seq > this.#lastDelivered + 1 && !this.#stopping) {
      this.#logger.error(
        { expected: this.#lastDelivered + 1, got: event.seq },
        'gap in the stream; reading the missing events',
      );
      const page = await this.#config.client.readEvents(
        this.threadId,
        { after: this.#lastDelivered, limit: Math.min(1000, event.seq - 1 - this.#lastDelivered) },
        { signal: this.#abort.signal },
      );
      const missing = page.events.filter(
        (candidate) => candidate.seq > this.#lastDelivered && candidate.seq < event.seq,
      );
      if (missing.length === 0)
        throw new Error(`events ${this.#lastDelivered + 1}..${event.seq - 1} of ${this.threadId} could not be read`);
      for (const candidate of missing) await this.#deliver(handler, candidate);
    }
    if (!this.#stopping) await this.#deliver(handler, event);
  }

  async #deliver(handler: ThreadHandler, event: EventEnvelope): Promise<void> {
    if (event.seq !== this.#lastDelivered + 1) return;
    this.#lastDelivered = event.seq;
    try {
      await handler.onEvent(event);
    } catch (error) {
      // The event stays unsettled, so a restart offers it again; this process moves on.
      this.#logger.error({ err: error, seq: event.seq, type: event.type }, 'thread handler failed on an event');
    }
  }

  /**
   * The stored checkpoint, if it belongs to the current membership. One below the join predates
   * it (the bot was removed and invited again): the new membership starts by `onFirstJoin`.
   */
  async #readCheckpoint(joinedSeq: number): Promise<number | null> {
    let stored: number | null;
    try {
      stored = await this.#config.checkpoints.get(this.threadId);
    } catch (error) {
      this.#logger.warn({ err: error }, 'checkpoint store unreadable; falling back to onFirstJoin');
      return null;
    }
    if (stored !== null && stored < joinedSeq - 1) {
      this.#logger.info(
        { checkpoint: stored, joinedSeq },
        'checkpoint predates the current membership; falling back to onFirstJoin',
      );
      return null;
    }
    return stored;
  }

  #context(checkpoint: number | null, startAfterSeq: number): ThreadContext<C> {
    return {
      threadId: this.threadId,
      grant: this.#config.grant,
      principalId: this.#config.principalId,
      client: this.#config.client,
      logger: this.#logger,
      signal: this.#abort.signal,
      startAfterSeq,
      checkpoint,
      settle: (seq) => this.#settle(seq),
    };
  }

  async #settle(seq: number): Promise<void> {
    if (!Number.isSafeInteger(seq) || seq < 0)
      throw new RangeError(`settle needs a non-negative integer seq, got ${String(seq)}`);
    if (seq > this.#lastDelivered)
      throw new RangeError(
        `cannot settle seq ${seq} of ${this.threadId}: only up to ${this.#lastDelivered} was delivered`,
      );
    if (seq <= this.#lastSettled) return;
    await this.#config.checkpoints.settle(this.threadId, seq);
    this.#lastSettled = Math.max(this.#lastSettled, seq);
    if (this.#config.cursorReceipts) this.#receipt(seq);
  }

  /** The consumer cursor as a receipt: at most one PUT in flight, later values coalesced. */
  #receipt(seq: number): void {
    if (this.#receiptInFlight !== undefined) {
      this.#receiptPending = Math.max(this.#receiptPending ?? 0, seq);
      return;
    }
    this.#receiptInFlight = (async () => {
      let next: number | undefined = seq;
      while (next !== undefined) {
        const value: number = next;
        this.#receiptPending = undefined;
        try {
          await this.#config.client.putCursor(this.threadId, value, { signal: this.#receiptAbort.signal });
        } catch (error) {
          this.#logger.debug({ err: error, seq: value }, 'cursor receipt not stored');
        }
        next = this.#receiptPending;
      }
    })().finally(() => {
      this.#receiptInFlight = undefined;
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#abort.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
