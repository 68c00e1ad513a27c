import { EngineError } from './engine-error.js';

/** Releases a slot. Idempotent: calling it twice frees one slot. */
export type Release = () => void;

export interface RunQueueSnapshot {
  /** Tickets holding a slot. */
  running: readonly string[];
  /** Tickets waiting, first in line first. */
  waiting: readonly string[];
}

export interface RunQueueOptions {
  /**
   * How many runs (live CLI processes) may hold a slot at once. This is a
   * memory knob: each live Claude CLI costs about 140 MB (PSS, engine-notes §5)
   * plus a process spawn and ~1 s per cold start.
   */
  size: number;
  /** Called after every change (acquire, release, cancel), e.g. to show queue positions. */
  onChange?: (snapshot: RunQueueSnapshot) => void;
}

export interface RunTicket {
  readonly id: string;
  /** Resolves with the release function once a slot is ours; rejects with run_queue_cancelled if aborted first. */
  readonly acquired: Promise<Release>;
  /** 0 = holds a slot, n >= 1 = n-th in line, null = no longer in the queue (released or cancelled). */
  position(): number | null;
}

interface Waiter {
  id: string;
  resolve: (release: Release) => void;
  reject: (error: EngineError) => void;
  detach: () => void;
}

/** A global FIFO semaphore over bot runs, with cancellation while queued. */
export class RunQueue {
  readonly size: number;
  readonly #onChange: ((snapshot: RunQueueSnapshot) => void) | undefined;
  /** Each running ticket with the token its release checks (a slot handed over leaves the old release idle). */
  readonly #running = new Map<string, { released: boolean }>();
  readonly #waiting: Waiter[] = [];
  readonly #listeners = new Set<(snapshot: RunQueueSnapshot) => void>();
  #nextId = 1;

  constructor(options: RunQueueOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) {
      throw new EngineError(
        'run_queue_invalid_size',
        `RunQueue size must be a positive integer, got ${String(options.size)}`,
      );
    }
    this.size = options.size;
    this.#onChange = options.onChange;
  }

  /** Joins the line. The ticket's `acquired` settles when a slot is granted or the signal aborts. */
  enqueue(options: { signal?: AbortSignal; id?: string } = {}): RunTicket {
    const id = options.id ?? `run-${this.#nextId++}`;
    const { signal } = options;
    if (this.position(id) !== null) {
      throw new EngineError('run_queue_duplicate_id', `run ticket id "${id}" is already queued or running`);
    }
    let acquired: Promise<Release>;
    if (signal?.aborted) {
      acquired = Promise.reject(cancelled(id, signal));
    } else if (this.#running.size < this.size && this.#waiting.length === 0) {
      acquired = Promise.resolve(this.#grant(id));
      this.#changed();
    } else {
      acquired = new Promise<Release>((resolve, reject) => {
        const onAbort = (): void => {
          const index = this.#waiting.findIndex((w) => w.id === id);
          if (index === -1) return;
          this.#waiting.splice(index, 1);
          reject(cancelled(id, signal));
          this.#changed();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.#waiting.push({
          id,
          resolve,
          reject,
          detach: () => signal?.removeEventListener('abort', onAbort),
        });
        this.#changed();
      });
    }
    return {
      id,
      acquired,
      position: () => this.position(id),
    };
  }

  /** Waits for a slot; shorthand for `enqueue(options).acquired`. */
  acquire(options: { signal?: AbortSignal; id?: string } = {}): Promise<Release> {
    return this.enqueue(options).acquired;
  }

  /**
   * A slot at once, only if one is free and nobody waits; else undefined (nothing is queued). For work
   * that may use a slot but must never stand in a run's way (a spare CLI).
   */
  tryAcquire(id: string): Release | undefined {
    if (this.position(id) !== null) {
      throw new EngineError('run_queue_duplicate_id', `run ticket id "${id}" is already queued or running`);
    }
    if (this.#running.size >= this.size || this.#waiting.length > 0) return undefined;
    const release = this.#grant(id);
    this.#changed();
    return release;
  }

  /**
   * Hands the slot of running ticket `fromId` to `toId` (a spare CLI's slot to the run that claimed it),
   * without freeing it in between. The old release no longer frees anything; the returned one does.
   */
  transfer(fromId: string, toId: string): Release {
    const token = this.#running.get(fromId);
    if (!token) throw new EngineError('run_queue_unknown_ticket', `run ticket "${fromId}" holds no slot`);
    if (this.position(toId) !== null) {
      throw new EngineError('run_queue_duplicate_id', `run ticket id "${toId}" is already queued or running`);
    }
    token.released = true;
    this.#running.delete(fromId);
    const release = this.#grant(toId);
    this.#changed();
    return release;
  }

  /** Calls `listener` after every change, like `onChange`; returns the function that stops it. */
  subscribe(listener: (snapshot: RunQueueSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** 0 = holds a slot, n >= 1 = n-th in line, null = unknown to the queue. */
  position(id: string): number | null {
    if (this.#running.has(id)) return 0;
    const index = this.#waiting.findIndex((w) => w.id === id);
    return index === -1 ? null : index + 1;
  }

  snapshot(): RunQueueSnapshot {
    return { running: [...this.#running.keys()], waiting: this.#waiting.map((w) => w.id) };
  }

  /** Marks `id` running and returns its release. */
  #grant(id: string): Release {
    const token = { released: false };
    this.#running.set(id, token);
    return () => {
      if (token.released) return;
      token.released = true;
      this.#running.delete(id);
      const next = this.#waiting.shift();
      if (next) {
        next.detach();
        next.resolve(this.#grant(next.id));
      }
      this.#changed();
    };
  }

  #changed(): void {
    const snapshot = this.snapshot();
    this.#onChange?.(snapshot);
    for (const listener of this.#listeners) listener(snapshot);
  }
}

function cancelled(id: string, signal: AbortSignal | undefined): EngineError {
  return new EngineError('run_queue_cancelled', `run ${id} was cancelled while waiting for a slot`, {
    cause: signal?.reason,
  });
}
