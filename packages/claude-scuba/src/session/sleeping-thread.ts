import type { EventEnvelope } from '@bubble/protocol';
import { fullJitterDelay, isPermanentFailure, type ThreadHandler, type ThreadStopReason } from '@bubble/sdk';
import type { Logger } from 'pino';
import type { ClaudeSdkSession } from './claude-sdk-session.js';
import type { SessionStore } from './session-store.js';

/** Events a session must see: anything a participant wrote, and the bot's own joining. */
export function wakesSession(event: EventEnvelope, selfId: string): boolean {
  if (event.principalId !== 'system') return true;
  return event.type === 'participant_added' && event.data.principalId === selfId;
}

export interface SleepingThreadOptions {
  readonly threadId: string;
  readonly selfId: string;
  readonly store: Pick<SessionStore, 'wasAwake' | 'setAwake'>;
  /** Makes and initialises the session, reading the thread after `scanAfter`. */
  readonly wake: (scanAfter: number) => Promise<ClaudeSdkSession>;
  /** The session is in memory, or no longer (the bot's registry of live sessions). */
  readonly awake: (session: ClaudeSdkSession) => void;
  readonly asleep: (session: ClaudeSdkSession) => void;
  /** Settles an event no session needed (the runtime's `settle`). */
  readonly settle: (seq: number) => Promise<void>;
  /** Where the first session's scan starts at the latest (the checkpoint, or the replay start). */
  readonly firstScanAfter: number;
  /** How long a session with nothing under way stays in memory. */
  readonly idleMs: number;
  readonly logger: Logger;
}

/** Events of the thread a waking session reads back, to learn what the bot answered. */
const SCAN_BACK = 1000;
const WAKE_BACKOFF = { baseMs: 500, capMs: 30_000 };

/**
 * One joined thread, costing next to nothing while nothing happens there: its session (who is
 * on it, what the bot answered, the drain, the query) is made on the first event a session must
 * see, and dropped again once it has had nothing under way for `idleMs`. What it knew is on the
 * thread and in the stores, so a new one reads it back as a restart would. A thread that had a
 * session when the bot last stopped wakes at once: a crash may have left one of its runs open.
 */
export class SleepingThread implements ThreadHandler {
  readonly #options: SleepingThreadOptions;
  #session: ClaudeSdkSession | undefined;
  /** Making the session, or dropping it: the next event waits for either. */
  #changing: Promise<void> | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #scanFloor: number;
  #lastSeq: number;
  #stopped = false;
  /** A wake was refused for good: the thread's events are neither handled nor settled any more. */
  #unreadable = false;
  /** Cuts a wake's backoff short when the thread stops. */
  #onStop: (() => void) | undefined;

  constructor(options: SleepingThreadOptions) {
    this.#options = options;
    this.#scanFloor = options.firstScanAfter;
    this.#lastSeq = options.firstScanAfter;
  }

  /** The session in memory, if the thread is awake. */
  get session(): ClaudeSdkSession | undefined {
    return this.#session;
  }

  /** Whether the thread is asleep with nothing changing (a sub-agent's subthread may then be let go). */
  get asleep(): boolean {
    return this.#session === undefined && this.#changing === undefined;
  }

  /**
   * Wakes the thread now if it had a session when the bot last ran. Tried once: a failure goes to
   * the runtime, which starts the thread again later, or not at all where retrying cannot help.
   */
  async start(): Promise<void> {
    if (this.#options.store.wasAwake(this.#options.threadId)) await this.#wake(this.#lastSeq, 1);
  }

  async onEvent(event: EventEnvelope): Promise<void> {
    // A drop may begin while this waits for a wake (or the other way round): wait until neither runs.
    while (this.#changing !== undefined) await this.#changing.catch(() => undefined);
    if (this.#stopped || this.#unreadable) return;
    this.#lastSeq = event.seq;
    if (this.#session === undefined) {
      if (!wakesSession(event, this.#options.selfId)) {
        await this.#options.settle(event.seq);
        return;
      }
      await this.#wake(event.seq - 1);
      if (this.#unreadable) return;
    }
    this.#session?.onEvent(event);
    this.#armIdle();
  }

  async stop(reason: ThreadStopReason): Promise<void> {
    this.#stopped = true;
    this.#onStop?.();
    this.#clearIdle();
    while (this.#changing !== undefined) await this.#changing.catch(() => undefined);
    const session = this.#session;
    this.#session = undefined;
    if (session === undefined) return;
    this.#options.asleep(session);
    // It stays marked awake: if its last events do not reach the server, the next start reads them back.
    await session.stop(reason);
  }

  /**
   * Makes the session; a failure (the server away, or busy) is tried again with backoff until it
   * works or the thread stops: the event that woke it waits, and nothing after it is delivered.
   */
  async #wake(before: number, attempts = Number.POSITIVE_INFINITY): Promise<void> {
    const { store, threadId, logger } = this.#options;
    const scanAfter = Math.max(0, Math.min(this.#scanFloor, before) - SCAN_BACK);
    const waking = (async () => {
      store.setAwake(threadId, true);
      for (let attempt = 0; !this.#stopped; attempt += 1) {
        try {
          const session = await this.#options.wake(scanAfter);
          this.#session = session;
          this.#options.awake(session);
          logger.debug({ threadId, scanAfter }, 'thread awake');
          return;
        } catch (error) {
          if (attempt + 1 >= attempts) throw error;
          if (isPermanentFailure(error)) {
            // Not readable, and trying again cannot change that (403, 404): nothing more is handled
            // or settled here, so a restart, or a runtime that stops the thread, finds it all again.
            logger.error({ err: error, threadId }, 'the thread cannot be read; handling nothing more of it');
            this.#unreadable = true;
            return;
          }
          const delayMs = fullJitterDelay(attempt, WAKE_BACKOFF, Math.random);
          logger.warn({ err: error, threadId, attempt, delayMs }, 'could not read the thread to wake it; trying again');
          await this.#pause(delayMs);
        }
      }
    })();
    this.#changing = waking;
    try {
      await waking;
    } finally {
      this.#changing = undefined;
    }
    // Later wakes read back from where the thread was when it fell asleep.
    this.#scanFloor = Number.POSITIVE_INFINITY;
    this.#armIdle();
  }

  /** Sleeps `ms`, or less if the thread stops meanwhile. */
  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#onStop = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #armIdle(): void {
    this.#clearIdle();
    this.#idleTimer = setTimeout(() => void this.#sleepIfIdle(), this.#options.idleMs);
    this.#idleTimer.unref();
  }

  #clearIdle(): void {
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  async #sleepIfIdle(): Promise<void> {
    this.#idleTimer = undefined;
    const session = this.#session;
    if (session === undefined || this.#changing !== undefined || this.#stopped) return;
    if (!session.droppable) {
      this.#armIdle();
      return;
    }
    const { store, threadId, logger } = this.#options;
    const dropping = (async () => {
      this.#session = undefined;
      this.#options.asleep(session);
      await session.stop('idle');
      store.setAwake(threadId, false);
      logger.debug({ threadId }, 'thread asleep');
    })();
    this.#changing = dropping;
    try {
      await dropping;
    } catch (error) {
      logger.warn({ err: error, threadId }, 'could not put the thread to sleep cleanly');
    } finally {
      this.#changing = undefined;
    }
  }
}
