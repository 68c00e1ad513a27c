import { isDeltaDraft, type BubbleEventDraft } from './bubble-draft.js';

/** Time, injected so tests drive it by hand. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface DeltaCoalescerOptions {
  /** Receives each batch to append, in order. */
  emit: (batch: BubbleEventDraft[]) => void;
  clock?: Clock;
  /** At most one delta append per this many ms (beside first deltas and full buffers). Default 50. */
  intervalMs?: number;
  /** A buffered delta this big (UTF-8 bytes) goes out at once. Default 2 KiB. */
  maxBytes?: number;
  /** Once a block has sent this many bytes, its deltas go out at most every `longIntervalMs`. Default 4 KiB. */
  longAfterBytes?: number;
  /** Default 100 ms: a long reply still updates ten times a second, with half the appends. */
  longIntervalMs?: number;
}

type Delta = Extract<BubbleEventDraft, { type: 'message_part' }> & {
  data: { chunk: { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string } };
};

/**
 * Merges the stream of text and reasoning deltas so a long reply is tens of
 * appends, not thousands: the first delta of a block goes out at once, later
 * ones at most every `intervalMs` (`longIntervalMs` once the block is long)
 * or when `maxBytes` have piled up. A block's start is held until its first
 * delta so both travel in one append (it is on the critical path of the
 * first words). Any other event (a block's end, a tool chunk, run_finished)
 * flushes what is held first and goes out with it in the same batch, so order
 * is kept and a run never ends with text still held back.
 */
export class DeltaCoalescer {
  readonly #emit: (batch: BubbleEventDraft[]) => void;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #maxBytes: number;
  readonly #longAfterBytes: number;
  readonly #longIntervalMs: number;
  /** Bytes sent per block id, for the long-block interval. */
  readonly #sent = new Map<string, number>();
  /** `text-start` / `reasoning-start` waiting for their first delta. */
  #heldStarts: BubbleEventDraft[] = [];
  #heldAt = 0;
  /** Block ids that have had their first delta. */
  readonly #started = new Set<string>();
  #pending: Delta | undefined;
  #pendingBytes = 0;
  #lastDeltaAt = Number.NEGATIVE_INFINITY;
  #timer: unknown;

  constructor(options: DeltaCoalescerOptions) {
    this.#emit = options.emit;
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = options.intervalMs ?? 50;
    this.#maxBytes = options.maxBytes ?? 2048;
    this.#longAfterBytes = options.longAfterBytes ?? 4096;
    this.#longIntervalMs = options.longIntervalMs ?? 100;
  }

  /** Whether a delta is being held back. */
  get holding(): boolean {
    return this.#pending !== undefined || this.#heldStarts.length > 0;
  }

  push(drafts: readonly BubbleEventDraft[]): void {
    const out: BubbleEventDraft[] = [];
    for (const draft of drafts) {
      if (isDeltaDraft(draft)) {
        const chunk = draft.data.chunk;
        const first = !this.#started.has(chunk.id);
        this.#started.add(chunk.id);
        if (this.#pending && (this.#pending.data.chunk.id !== chunk.id || this.#pending.data.chunk.type !== chunk.type))
          out.push(this.#take());
        if (this.#pending) {
          this.#pending.data.chunk.delta += chunk.delta;
        } else {
          this.#pending = { ...draft, data: { ...draft.data, chunk: { ...chunk } } } as Delta;
        }
        this.#pendingBytes += Buffer.byteLength(chunk.delta, 'utf8');
        const due = this.#clock.now() - this.#lastDeltaAt >= this.#interval(chunk.id);
        if (first || due || this.#pendingBytes >= this.#maxBytes) {
          out.push(...this.#takeStarts(), this.#take());
        }
      } else {
        const chunk = draft.type === 'message_part' ? draft.data.chunk : undefined;
        if (this.#pending) out.push(this.#take());
        if (chunk && (chunk.type === 'text-start' || chunk.type === 'reasoning-start')) {
          if (this.#heldStarts.length === 0) this.#heldAt = this.#clock.now();
          this.#heldStarts.push(draft);
          continue;
        }
        out.push(...this.#takeStarts(), draft);
        if (chunk && (chunk.type === 'text-end' || chunk.type === 'reasoning-end')) {
          this.#started.delete(chunk.id);
          this.#sent.delete(chunk.id);
        }
      }
    }
    if (out.length > 0) this.#emit(out);
    this.#arm();
  }

  /** Sends whatever is held back now. */
  flush(): void {
    const out = [...this.#takeStarts(), ...(this.#pending ? [this.#take()] : [])];
    if (out.length > 0) this.#emit(out);
    this.#arm();
  }

  /** Stops the timer; anything held back is dropped (call flush first to keep it). */
  dispose(): void {
    this.#pending = undefined;
    this.#pendingBytes = 0;
    this.#heldStarts = [];
    this.#arm();
  }

  #interval(blockId: string): number {
    return (this.#sent.get(blockId) ?? 0) >= this.#longAfterBytes ? this.#longIntervalMs : this.#intervalMs;
  }

  #takeStarts(): BubbleEventDraft[] {
    const starts = this.#heldStarts;
    this.#heldStarts = [];
    return starts;
  }

  #take(): Delta {
    const delta = this.#pending!;
    this.#sent.set(delta.data.chunk.id, (this.#sent.get(delta.data.chunk.id) ?? 0) + this.#pendingBytes);
    this.#pending = undefined;
    this.#pendingBytes = 0;
    this.#lastDeltaAt = this.#clock.now();
    return delta;
  }

  #arm(): void {
    if (this.holding && this.#timer === undefined) {
      const due = this.#pending
        ? this.#lastDeltaAt + this.#interval(this.#pending.data.chunk.id)
        : this.#heldAt + this.#intervalMs;
      const wait = Math.max(0, due - this.#clock.now());
      this.#timer = this.#clock.setTimeout(() => {
        this.#timer = undefined;
        this.flush();
      }, wait);
    } else if (!this.holding && this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
