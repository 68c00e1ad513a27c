import type { NewEvent } from '@bubble/protocol';
import { isBubbleApiError } from '@bubble/sdk';
import type { Logger } from 'pino';
import { isDeltaDraft, type BubbleEventDraft } from '../translate/bubble-draft.js';
import { DeltaCoalescer, systemClock, type Clock } from '../translate/delta-coalescer.js';

/** Appends a batch atomically (the sdk's `BubbleClient.appendEvents`). */
export type AppendFn = (threadId: string, events: NewEvent[]) => Promise<unknown>;

const MAX_BATCH = 500;
const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 30_000;

/**
 * Whether sending the same batch again can succeed: the server was
 * unreachable, slow, overloaded or briefly down. The batch keeps its
 * clientEventIds, so a retry never lands twice.
 */
export function mayRetryAppend(error: unknown): boolean {
  if (!isBubbleApiError(error)) return false;
  return error.retryable || error.code === 'network' || error.code === 'timeout';
}

/**
 * One thread's outgoing events: one append in flight at a time, in order.
 * What piles up meanwhile goes out as the next batch, with adjacent deltas of
 * one block merged (they have not been sent, so their ids are free to go).
 */
export class ThreadAppender {
  readonly threadId: string;
  readonly #append: AppendFn;
  readonly #logger: Logger;
  #pending: BubbleEventDraft[] = [];
  #running: Promise<void> | undefined;
  #appends = 0;
  #failed = 0;
  /** HTTP appends that carried events of each open run. */
  readonly #perRun = new Map<string, number>();
  readonly #clock: Clock;
  #stopping = false;
  #wake: (() => void) | undefined;

  /** Whether a batch is on its way or waiting to be. */
  get busy(): boolean {
    return this.#running !== undefined || this.#pending.length > 0;
  }

  constructor(
    threadId: string,
    append: AppendFn,
    logger: Logger,
    clock: Clock = systemClock,
    readonly settled?: (drafts: readonly BubbleEventDraft[]) => void,
  ) {
    this.threadId = threadId;
    this.#append = append;
    this.#logger = logger;
    this.#clock = clock;
  }

  /** Ends retries of a batch the server cannot take now (the session is stopping). */
  stopRetrying(): void {
    this.#stopping = true;
    this.#wake?.();
  }

  /** HTTP appends made so far. */
  get appends(): number {
    return this.#appends;
  }

  /** Batches the server refused or that never got through (logged, then dropped). */
  get failed(): number {
    return this.#failed;
  }

  enqueue(drafts: readonly BubbleEventDraft[]): void {
    if (drafts.length === 0) return;
    this.#pending.push(...drafts);
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves once everything enqueued so far has been sent (or given up on). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = () => {
        this.#clock.clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
    });
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = mergeDeltas(this.#pending.splice(0, MAX_BATCH));
      this.#appends += 1;
      for (const runId of new Set(batch.map((draft) => draft.data.runId)))
        this.#perRun.set(runId, (this.#perRun.get(runId) ?? 0) + 1);
      const events = batch.map((draft) => ({ type: draft.type, data: draft.data, clientEventId: draft.clientEventId }));
      for (let attempt = 0; ; attempt += 1) {
        try {
          await this.#append(this.threadId, events);
          break;
        } catch (error) {
          if (mayRetryAppend(error) && !this.#stopping) {
            // The server is away: keep the batch (same ids, so no duplicate) and try again, in order.
            const delay = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt);
            this.#logger.warn(
              { err: error, threadId: this.threadId, attempt, delayMs: delay },
              'append failed; retrying',
            );
            await this.#sleep(delay);
            continue;
          }
          // A refusal (a closed run, a revoked grant), or the session is stopping.
          this.#failed += 1;
          this.#logger.error(
            { err: error, threadId: this.threadId, events: batch.length, first: batch[0]?.clientEventId },
            'append failed; batch dropped',
          );
          break;
        }
      }
      this.settled?.(batch);
      for (const draft of batch) {
        if (draft.type !== 'run_finished') continue;
        // One line per run: how many HTTP appends its events took (the figure the benchmark reads).
        this.#logger.info(
          { threadId: this.threadId, runId: draft.data.runId, appends: this.#perRun.get(draft.data.runId) ?? 0 },
          'run appended',
        );
        this.#perRun.delete(draft.data.runId);
      }
    }
  }
}

/** Merges adjacent deltas of the same block into the first one. Never mutates its input. */
export function mergeDeltas(drafts: readonly BubbleEventDraft[]): BubbleEventDraft[] {
  const out: BubbleEventDraft[] = [];
  for (const draft of drafts) {
    const last = out.at(-1);
    if (
      last &&
      isDeltaDraft(last) &&
      isDeltaDraft(draft) &&
      last.data.chunk.id === draft.data.chunk.id &&
      last.data.chunk.type === draft.data.chunk.type
    ) {
      out[out.length - 1] = {
        ...last,
        data: { ...last.data, chunk: { ...last.data.chunk, delta: last.data.chunk.delta + draft.data.chunk.delta } },
      };
    } else {
      out.push(draft);
    }
  }
  return out;
}

/** Coalescer plus appender for each thread the session writes to (its own, and sub-agents' subthreads). */
export class Outbound {
  readonly #lanes = new Map<string, { coalescer: DeltaCoalescer; appender: ThreadAppender }>();
  readonly #append: AppendFn;
  readonly #logger: Logger;
  readonly #clock: Clock | undefined;
  readonly #observe: ((drafts: readonly BubbleEventDraft[]) => void) | undefined;
  readonly #settled: ((drafts: readonly BubbleEventDraft[]) => void) | undefined;

  /**
   * `observe` sees every draft as it is sent, on every thread; `settled` each batch once it has
   * been appended or given up on (together, the bot's record of the runs it has open).
   */
  constructor(options: {
    append: AppendFn;
    logger: Logger;
    clock?: Clock;
    observe?: (drafts: readonly BubbleEventDraft[]) => void;
    settled?: (drafts: readonly BubbleEventDraft[]) => void;
  }) {
    this.#append = options.append;
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.#observe = options.observe;
    this.#settled = options.settled;
  }

  /** Nothing held back or on its way, on any thread. */
  get idle(): boolean {
    return [...this.#lanes.values()].every((lane) => !lane.coalescer.holding && !lane.appender.busy);
  }

  send(threadId: string, drafts: readonly BubbleEventDraft[]): void {
    this.#observe?.(drafts);
    this.#lane(threadId).coalescer.push(drafts);
  }

  /** Sends what the coalescers hold and waits for every appender. */
  async flush(): Promise<void> {
    for (const lane of this.#lanes.values()) lane.coalescer.flush();
    await Promise.all([...this.#lanes.values()].map((lane) => lane.appender.idle()));
  }

  /** HTTP appends per thread so far. */
  appendCounts(): Record<string, number> {
    return Object.fromEntries([...this.#lanes].map(([threadId, lane]) => [threadId, lane.appender.appends]));
  }

  /** Gives up retrying batches the server cannot take (the session is stopping); then `flush` ends. */
  stopRetrying(): void {
    for (const lane of this.#lanes.values()) lane.appender.stopRetrying();
  }

  dispose(): void {
    for (const lane of this.#lanes.values()) lane.coalescer.dispose();
  }

  #lane(threadId: string) {
    let lane = this.#lanes.get(threadId);
    if (!lane) {
      const appender = new ThreadAppender(threadId, this.#append, this.#logger, this.#clock, this.#settled);
      const coalescer = new DeltaCoalescer({
        emit: (batch) => appender.enqueue(batch),
        clock: this.#clock,
      });
      lane = { coalescer, appender };
      this.#lanes.set(threadId, lane);
    }
    return lane;
  }
}
