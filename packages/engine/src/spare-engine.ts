import {
  prewarm as sdkPrewarm,
  type ClaimOptions,
  type Options,
  type Query,
  type SpareProcess,
} from '@anthropic-ai/claude-agent-sdk';
import { pino, type Logger } from 'pino';
import { liveQueryFrom, type LiveQuery } from './live-query.js';
import type { Release, RunQueue } from './run-queue.js';

/** A flag-settings overlay (`Query.applyFlagSettings`): each top-level key replaces the one before it whole. */
export type FlagSettings = Parameters<Query['applyFlagSettings']>[0];

/** One spare's host-level part, made by the owner before its CLI starts. */
export interface SpareSetup<B> {
  /** The options the CLI starts with: no `cwd`, no `resume`, nothing of any thread. */
  readonly options: Options;
  /**
   * Points the spare's late-bound callbacks (`canUseTool`, in-process MCP handlers) at the run that
   * claimed it, just before the claim; `undefined` points them at nothing again (the claim failed).
   */
  bind(binding: B | undefined): void;
  /** The spare's CLI is gone (it was never claimed, or its claimed query ended): remove what was made for it. */
  dispose(): void;
}

/** How a run would use a spare: the claim, or why this spare cannot serve it. */
export type SparePlan =
  | {
      /** The per-session options of the claim (`settings` goes in `settings` below, not here). */
      readonly claim: Omit<ClaimOptions, 'settings'>;
      /** Applied once the claim is answered, before the first message (see `SpareEngine`). */
      readonly settings?: FlagSettings;
    }
  | { readonly refuse: string };

export interface SpareRequest<B, S> {
  /** The RunQueue ticket id the spare's slot is handed to. */
  id: string;
  /** Called with the spare once its CLI is ready; it may say the spare cannot serve this run. */
  plan: (spare: S) => SparePlan;
  /** What the spare's callbacks call once it is claimed. */
  binding: B;
  /** Starts a normal query in the same slot, when the spare cannot serve the run. */
  fallback: () => LiveQuery;
  /** The run's logger (carries its ids); defaults to the engine's. */
  logger?: Logger;
}

export interface SpareServed {
  query: LiveQuery;
  /** The CLI slot, now the run's. */
  release: Release;
  spareId: string;
  /** True when the spare serves the run; false when it could not and `fallback` started the query. */
  claimed: boolean;
}

export interface SpareEngineOptions<B, S extends SpareSetup<B>> {
  /** How many spares to keep parked (0: none). */
  count: number;
  /** The bot's CLI slots: a spare holds one while it is parked. */
  runQueue: RunQueue;
  /** Makes one spare's host-level part; called once per spare, with its id. */
  prepare: (spareId: string) => S;
  logger?: Logger;
  /** The SDK's prewarm(); injectable. */
  prewarm?: (params: { options: Options; initializeTimeoutMs?: number }) => Promise<SpareProcess>;
  /** How long a claim (and its settings) may take before the spare is given up for a normal query. Default 5 s. */
  claimTimeoutMs?: number;
  /** How long after a claim the next spare starts, so its start-up does not compete with the claimed turn. Default 1 s. */
  refillDelayMs?: number;
  /** prewarm()'s own limit for the CLI to start. Default 60 s. */
  initializeTimeoutMs?: number;
}

interface Spare<S> {
  readonly id: string;
  readonly setup: S;
  readonly ready: Promise<SpareProcess>;
  readonly startedAt: number;
  /** Frees the slot held under the spare's own ticket id. */
  readonly release: Release;
  parked: boolean;
  disposed: boolean;
}

const MAX_RETRY_MS = 60_000;

/**
 * Spare Claude CLIs, started before the thread they will serve is known (issue
 * 19, "A spare engine"). Built on the SDK's `prewarm()`, not `startup()`:
 * `startup()` takes the session's full options up front, `cwd` and `resume`
 * among them, so it cannot be made before the thread is known; `prewarm()`
 * starts the process, its tools and in-process MCP servers, and binds the
 * working directory, the prompt's append and the session only at `claim()`.
 *
 * What a spare cannot take at its claim, measured with CLI 2.1.332: `resume`
 * (prewarm() refuses it, the claim has no field for it, and `/resume` is
 * unavailable headless), the environment (credential, TMPDIR), `mcpServers`,
 * `canUseTool`, tools, the system prompt preset, and every permission rule
 * and sandbox path given at start-up: an overlay can add rules but never take
 * one away. A claim's own `settings` overlay was seen not to be in force when
 * it carried `permissions` alone or `sandbox` alone, so this engine claims
 * with an empty overlay (which still holds the prompt until the claim is
 * answered) and applies the run's settings itself once the claim is answered,
 * where they were seen in force, before anything is pushed.
 *
 * Each spare holds a RunQueue slot while it is parked, so it counts against
 * the bot's limit; it is started only when a slot is free and nobody waits
 * (`tryAcquire`), so it never stands in a run's way; `yieldSlot` closes one
 * for a run that cannot use it. A claimed spare's slot is handed to the run,
 * and another spare starts `refillDelayMs` later. A spare that refuses, dies
 * or does not answer is given up for a normal query in the same slot; nothing
 * has been pushed to it by then, so the run's first message reaches exactly
 * one CLI.
 */
export class SpareEngine<B, S extends SpareSetup<B> = SpareSetup<B>> {
  readonly #count: number;
  readonly #runQueue: RunQueue;
  readonly #prepare: (spareId: string) => S;
  readonly #log: Logger;
  readonly #prewarm: NonNullable<SpareEngineOptions<B, S>['prewarm']>;
  readonly #claimTimeoutMs: number;
  readonly #refillDelayMs: number;
  readonly #initializeTimeoutMs: number;
  readonly #pool: Array<Spare<S>> = [];
  /** Every spare's exit (parked or claimed), so `stop` can wait for the ones it closes. */
  readonly #exits = new Map<string, Promise<void>>();
  #unsubscribe: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #holdUntil = 0;
  #failures = 0;
  #next = 1;
  #stopped = false;
  #saidBlocked = false;

  constructor(options: SpareEngineOptions<B, S>) {
    this.#count = options.count;
    this.#runQueue = options.runQueue;
    this.#prepare = options.prepare;
    this.#log = options.logger ?? pino({ level: 'silent' });
    this.#prewarm = options.prewarm ?? sdkPrewarm;
    this.#claimTimeoutMs = options.claimTimeoutMs ?? 5_000;
    this.#refillDelayMs = options.refillDelayMs ?? 1_000;
    this.#initializeTimeoutMs = options.initializeTimeoutMs ?? 60_000;
  }

  /** Starts keeping spares (as slots allow), and follows the RunQueue to refill when a slot frees. */
  start(): void {
    if (this.#count <= 0 || this.#stopped || this.#unsubscribe) return;
    this.#unsubscribe = this.#runQueue.subscribe(() => this.#soon(0));
    this.#fill();
  }

  /** Spare ids by state. */
  snapshot(): { parked: string[]; starting: string[] } {
    return {
      parked: this.#pool.filter((s) => s.parked).map((s) => s.id),
      starting: this.#pool.filter((s) => !s.parked).map((s) => s.id),
    };
  }

  /**
   * Serves run `request.id` with a spare, when one is parked (or starting: its start is under way, so
   * waiting for it is no slower than a new CLI). Its slot becomes the run's at once. Undefined when
   * there is none: the caller queues for a slot as before.
   */
  open(request: SpareRequest<B, S>): Promise<SpareServed> | undefined {
    if (this.#stopped) return undefined;
    const spare = this.#pool.find((s) => s.parked) ?? this.#pool[0];
    if (!spare) return undefined;
    const release = this.#runQueue.transfer(spare.id, request.id);
    this.#remove(spare);
    this.#holdUntil = Date.now() + this.#refillDelayMs;
    this.#soon(this.#refillDelayMs);
    return this.#serve(spare, request, release);
  }

  /** Closes one spare to free its slot for a run that cannot use it. Whether there was one. */
  yieldSlot(reason: string): boolean {
    const spare = this.#pool.find((s) => !s.parked) ?? this.#pool[0];
    if (!spare) return false;
    this.#remove(spare);
    spare.release();
    this.#close(spare);
    this.#log.info({ spareId: spare.id, reason }, 'spare CLI closed to free its slot');
    return true;
  }

  /** Stops refilling and closes every spare not yet claimed; resolves when their CLIs have exited (at most 10 s). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    clearTimeout(this.#timer);
    const closing = this.#pool.splice(0);
    for (const spare of closing) {
      spare.release();
      this.#close(spare);
    }
    if (closing.length > 0) this.#log.info({ spares: closing.map((s) => s.id) }, 'spare CLIs closed');
    const exits = closing.map((s) => this.#exits.get(s.id) ?? Promise.resolve());
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(exits),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 10_000);
      }),
    ]);
    clearTimeout(timer);
  }

  async #serve(spare: Spare<S>, request: SpareRequest<B, S>, release: Release): Promise<SpareServed> {
    const log = request.logger ?? this.#log;
    const takenAt = Date.now();
    let spareProcess: SpareProcess;
    try {
      spareProcess = await spare.ready;
    } catch (error) {
      return this.#fallback(spare, request, release, `it did not start: ${reasonOf(error)}`);
    }
    let plan: SparePlan;
    try {
      plan = request.plan(spare.setup);
    } catch (error) {
      this.#close(spare);
      release();
      throw error;
    }
    if ('refuse' in plan) {
      this.#close(spare);
      return this.#fallback(spare, request, release, plan.refuse);
    }
    spare.setup.bind(request.binding);
    let query: LiveQuery | undefined;
    try {
      // An empty overlay: the SDK then sends no message before the claim is answered (and none at all if it is refused).
      const started = liveQueryFrom(
        (prompt) => spareProcess.claim({ prompt, options: { ...plan.claim, settings: {} } }),
        log,
      );
      query = started;
      const claimed = await within(spareProcess.claimed.catch(ranAnyway), this.#claimTimeoutMs, 'the claim');
      if (plan.settings !== undefined) {
        await within(started.sdkQuery.applyFlagSettings(plan.settings), this.#claimTimeoutMs, 'its settings');
      }
      this.#failures = 0;
      log.info(
        { spareId: spare.id, claimMs: Date.now() - takenAt, parkedMs: claimed.parkedMs, sessionId: claimed.sessionId },
        'spare CLI claimed',
      );
      void started.ended.then(() => spare.setup.bind(undefined));
      return { query: started, release, spareId: spare.id, claimed: true };
    } catch (error) {
      spare.setup.bind(undefined);
      query?.close();
      this.#close(spare);
      return this.#fallback(spare, request, release, reasonOf(error));
    }
  }

  #fallback(spare: Spare<S>, request: SpareRequest<B, S>, release: Release, reason: string): SpareServed {
    (request.logger ?? this.#log).warn(
      { spareId: spare.id, reason },
      'spare CLI refused; starting a normal query instead',
    );
    try {
      return { query: request.fallback(), release, spareId: spare.id, claimed: false };
    } catch (error) {
      release();
      throw error;
    }
  }

  #soon(delayMs: number): void {
    if (this.#stopped || this.#timer !== undefined) return;
    const wait = Math.max(delayMs, this.#holdUntil - Date.now(), 0);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#fill();
    }, wait);
    this.#timer.unref();
  }

  #fill(): void {
    if (this.#stopped || this.#count <= 0) return;
    const wait = this.#holdUntil - Date.now();
    if (wait > 0) {
      this.#soon(wait);
      return;
    }
    while (this.#pool.length < this.#count) {
      const id = `spare-${this.#next}`;
      const release = this.#runQueue.tryAcquire(id);
      if (!release) {
        if (!this.#saidBlocked) this.#log.debug('no free CLI slot for a spare: none is started');
        this.#saidBlocked = true;
        return;
      }
      this.#saidBlocked = false;
      this.#next += 1;
      this.#start(id, release);
    }
  }

  #start(id: string, release: Release): void {
    let setup: S;
    try {
      setup = this.#prepare(id);
    } catch (error) {
      release();
      this.#failed(id, error);
      return;
    }
    this.#log.info({ spareId: id }, 'spare CLI starting');
    const ready = this.#prewarm({ options: setup.options, initializeTimeoutMs: this.#initializeTimeoutMs });
    const spare: Spare<S> = { id, setup, ready, startedAt: Date.now(), release, parked: false, disposed: false };
    this.#pool.push(spare);
    // Every spare's folder goes when its CLI has exited, claimed or not.
    const exit = ready.then(
      (p) => p.exited,
      () => undefined,
    );
    this.#exits.set(id, exit);
    void exit.then(() => {
      this.#exits.delete(id);
      this.#dispose(spare);
    });
    ready.then(
      (p) => {
        if (!this.#pool.includes(spare)) return;
        spare.parked = true;
        this.#log.info({ spareId: id, startMs: Date.now() - spare.startedAt }, 'spare CLI parked');
        void p.exited.then(() => {
          if (!this.#pool.includes(spare)) return;
          this.#remove(spare);
          release();
          this.#failed(id, new Error('it exited while parked'), 'spare CLI exited while parked; replacing it');
        });
      },
      (error: unknown) => {
        if (!this.#pool.includes(spare)) return;
        this.#remove(spare);
        release();
        this.#failed(id, error);
      },
    );
  }

  /** A spare could not be kept: the next one starts after a back-off that doubles (1 s … 60 s). */
  #failed(id: string, error: unknown, message = 'spare CLI failed to start; trying again later'): void {
    this.#failures += 1;
    const retryInMs = Math.min(MAX_RETRY_MS, 1000 * 2 ** (this.#failures - 1));
    this.#log.warn({ spareId: id, reason: reasonOf(error), retryInMs }, message);
    this.#holdUntil = Date.now() + retryInMs;
    this.#soon(retryInMs);
  }

  #close(spare: Spare<S>): void {
    spare.ready.then(
      (p) => p.close(),
      () => undefined,
    );
  }

  #dispose(spare: Spare<S>): void {
    if (spare.disposed) return;
    spare.disposed = true;
    try {
      spare.setup.dispose();
    } catch (error) {
      this.#log.warn({ spareId: spare.id, err: error }, 'could not clean up after a spare CLI');
    }
  }

  #remove(spare: Spare<S>): void {
    const index = this.#pool.indexOf(spare);
    if (index !== -1) this.#pool.splice(index, 1);
  }
}

/** `option_not_applied` means the session runs without `model` or `maxThinkingTokens`: it was claimed all the same. */
function ranAnyway(error: unknown): { sessionId?: string; parkedMs?: number } {
  const claim = (error as { claim?: { sessionId?: string; parkedMs?: number } } | undefined)?.claim;
  if (error instanceof Error && error.message.startsWith('option_not_applied') && claim) return claim;
  throw error;
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} got no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
