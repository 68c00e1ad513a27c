import { randomBytes } from 'node:crypto';
import { RunQueue, isEngineError, type Release } from '@bubble/engine';
import type { Logger } from 'pino';
import type { DashboardRun, DashboardSource } from '../dashboard/dashboard-server.js';
import type { ReplyStream } from '../reply/reply-stream.js';
import type { TurnKind } from './turn-options.js';

/** One turn waiting or running, as the dashboard and `/reset` see it. */
export interface RunInfo {
  id: string;
  kind: TurnKind;
  threadId: string;
  threadName: string | undefined;
  guildId: string | undefined;
  userId: string;
  userName: string;
}

/** What the manager calls once a run holds a slot; it must settle when `signal` aborts (its `reason` is a sentence for the thread). */
export type RunBody = (signal: AbortSignal) => Promise<void>;

interface Run extends RunInfo {
  state: 'waiting' | 'queued' | 'running';
  enqueuedAt: number;
  startedAt: number | undefined;
  controller: AbortController;
  reply: ReplyStream;
  /** Why it was stopped, for the reply ("Stopped by …"). */
  stopReason: string | undefined;
  lastPosition: number | undefined;
}

/**
 * Every run of the bot: one global `RunQueue` of `maxConcurrentRuns` slots
 * (one CLI process each), turns of one thread one after another (they share
 * one session), queue positions shown to those waiting, and aborts from
 * `/reset`, the dashboard and shutdown.
 */
export class RunManager implements DashboardSource {
  readonly #queue: RunQueue;
  readonly #runs = new Map<string, Run>();
  readonly #threadTails = new Map<string, Promise<void>>();
  readonly #logger: Logger;
  readonly #now: () => number;

  readonly #maxRunMs: number | undefined;

  constructor(options: { maxConcurrentRuns: number; logger: Logger; now?: () => number; maxRunSeconds?: number }) {
    this.#logger = options.logger;
    this.#maxRunMs = options.maxRunSeconds === undefined ? undefined : options.maxRunSeconds * 1000;
    this.#now = options.now ?? Date.now;
    this.#queue = new RunQueue({ size: options.maxConcurrentRuns, onChange: () => this.#showPositions() });
  }

  /**
   * Starts a run after the thread's earlier turns, once a slot is free. The
   * returned promise settles when the run has ended (it never rejects).
   */
  submit(info: Omit<RunInfo, 'id'>, reply: ReplyStream, body: RunBody): { id: string; done: Promise<void> } {
    const id = `run-${randomBytes(6).toString('hex')}`;
    const run: Run = {
      ...info,
      id,
      state: 'waiting',
      enqueuedAt: this.#now(),
      startedAt: undefined,
      controller: new AbortController(),
      reply,
      stopReason: undefined,
      lastPosition: undefined,
    };
    this.#runs.set(id, run);
    const before = this.#threadTails.get(info.threadId) ?? Promise.resolve();
    if (this.#threadTails.has(info.threadId)) reply.setStatus('⏳ Waiting for the reply before this one to finish…');
    const done = before
      .then(() => this.#execute(run, body))
      .catch((error: unknown) => this.#logger.error({ err: error, runId: id }, 'a run could not start'))
      .finally(() => this.#runs.delete(id));
    const tail = done.catch(() => undefined);
    this.#threadTails.set(info.threadId, tail);
    void tail.then(() => {
      if (this.#threadTails.get(info.threadId) === tail) this.#threadTails.delete(info.threadId);
    });
    return { id, done };
  }

  async #execute(run: Run, body: RunBody): Promise<void> {
    const { signal } = run.controller;
    if (signal.aborted) return this.#stopped(run);
    const ticket = this.#queue.enqueue({ id: run.id, signal });
    run.state = 'queued';
    this.#showPosition(run, ticket.position());
    let release: Release;
    try {
      release = await ticket.acquired;
    } catch (error) {
      if (isEngineError(error) && error.code === 'run_queue_cancelled') return this.#stopped(run);
      throw error;
    }
    run.state = 'running';
    run.startedAt = this.#now();
    const limit = this.#maxRunMs;
    // A slot is one of a few CLI processes: a run may not hold it for ever.
    const timer =
      limit === undefined
        ? undefined
        : setTimeout(
            () => this.abort(run.id, `Stopped: a reply may run for ${Math.round(limit / 60_000)} min at most.`),
            limit,
          );
    try {
      await body(signal);
    } catch (error) {
      this.#logger.error({ err: error, runId: run.id, threadId: run.threadId }, 'a run failed unexpectedly');
      await run.reply.finish({ ok: false, notice: 'Something went wrong on my side, sorry. Try again in a moment.' });
    } finally {
      clearTimeout(timer);
      release();
    }
  }

  async #stopped(run: Run): Promise<void> {
    await run.reply.finish({ ok: false, notice: run.stopReason ?? 'Stopped.' });
  }

  #showPositions(): void {
    for (const run of this.#runs.values()) {
      if (run.state === 'queued') this.#showPosition(run, this.#queue.position(run.id));
    }
  }

  #showPosition(run: Run, position: number | null): void {
    if (position === null || position === 0 || position === run.lastPosition) return;
    run.lastPosition = position;
    run.reply.setStatus(
      `⏳ Queued: you are #${position} in line for a free Claude slot (${this.#queue.size} at a time).`,
    );
  }

  /** Stops one run (dashboard); false when it is not known (finished). */
  abort(id: string, reason = 'Stopped from the dashboard.'): boolean {
    const run = this.#runs.get(id);
    if (run === undefined) return false;
    run.stopReason ??= reason;
    // The reason rides on the signal, so the run's own ending can say why it stopped.
    run.controller.abort(run.stopReason);
    return true;
  }

  /** Stops every run of a thread, waiting and running (`/reset`); how many. */
  abortThread(threadId: string, reason: string): number {
    let count = 0;
    for (const run of this.#runs.values()) {
      if (run.threadId === threadId && this.abort(run.id, reason)) count++;
    }
    return count;
  }

  /** Stops every run started by a user (`/unlink`: their token is gone); how many. */
  abortUser(userId: string, reason: string): number {
    let count = 0;
    for (const run of this.#runs.values()) {
      if (run.userId === userId && this.abort(run.id, reason)) count++;
    }
    return count;
  }

  /** Stops everything (shutdown) and resolves when every run has ended, or after `timeoutMs`. */
  async abortAll(reason: string, timeoutMs: number): Promise<void> {
    const tails = [...this.#threadTails.values()];
    for (const run of this.#runs.values()) this.abort(run.id, reason);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(tails), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  runs(): DashboardRun[] {
    return [...this.#runs.values()].map((run) => ({
      id: run.id,
      threadId: run.threadId,
      threadName: run.threadName,
      guildId: run.guildId,
      userId: run.userId,
      userName: run.userName,
      mode: run.kind,
      state: run.state === 'running' ? 'running' : 'queued',
      position: run.state === 'running' ? undefined : (this.#queue.position(run.id) ?? undefined),
      enqueuedAt: run.enqueuedAt,
      startedAt: run.startedAt,
    }));
  }
}
