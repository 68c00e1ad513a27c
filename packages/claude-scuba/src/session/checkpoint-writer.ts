import type { Logger } from 'pino';
import type { Clock } from '../translate/delta-coalescer.js';

export interface CheckpointWriterOptions {
  /** The sdk runtime's `settle`: every event up to seq is handled. */
  settle: (seq: number) => Promise<void>;
  /** Seqs still waiting (buffered, or consumed by the running turn), and the last seq seen. */
  waiting: () => { seqs: number[]; lastSeq: number };
  /** Whether now is a quiet moment (no run streaming, no turn starting). */
  quiet: () => boolean;
  clock: Clock;
  logger: Logger;
  /** Default 200 ms. */
  delayMs?: number;
}

/**
 * Writes the settlement checkpoint: up to just below the oldest event still
 * waiting. A write is a synchronous SQLite fsync, which would stall whatever
 * the event loop does next (often the event that completes a turn, or the
 * CLI's first words), so writes wait for a quiet moment: `delayMs` after the
 * last request, and never while a run streams (its end asks again). One
 * write in flight; later targets coalesce.
 */
export class CheckpointWriter {
  readonly #options: CheckpointWriterOptions;
  #target = 0;
  #written = 0;
  #timer: unknown;
  #writing: Promise<void> | undefined;

  constructor(options: CheckpointWriterOptions) {
    this.#options = options;
  }

  /** Asks for a write at the next quiet moment. */
  soon(): void {
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = this.#options.clock.setTimeout(() => {
      this.#timer = undefined;
      if (this.#options.quiet()) this.now();
    }, this.#options.delayMs ?? 200);
  }

  /** Writes now (shutdown). */
  now(): void {
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const { seqs, lastSeq } = this.#options.waiting();
    const upTo = seqs.length > 0 ? Math.min(...seqs) - 1 : lastSeq;
    if (upTo <= 0) return;
    this.#target = Math.max(this.#target, upTo);
    this.#writing ??= (async () => {
      while (this.#target > this.#written) {
        const target = this.#target;
        try {
          await this.#options.settle(target);
          this.#written = target;
        } catch (error) {
          this.#options.logger.warn({ err: error, seq: target }, 'settle failed');
          break;
        }
      }
    })().finally(() => {
      this.#writing = undefined;
    });
  }

  /** Resolves once the writes started so far are done. */
  async idle(): Promise<void> {
    while (this.#writing) await this.#writing;
  }
}
