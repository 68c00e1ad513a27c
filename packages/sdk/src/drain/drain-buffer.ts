import type { EventEnvelope } from '@bubble/protocol';
import { extractDrainPayload, type DrainOptions, type DrainPayload } from './extract-drain-payload.js';

/**
 * The stateful side of the drain rule: a thread's buffer of foreign events. `observe` takes each
 * event in seq order (the bot's own are dropped at once), `drain` extracts the finalized runs and
 * keeps the in-flight ones. `drainedThrough` is the highest seq below which nothing is still
 * buffered: the seq a handler may settle once it has dealt with what `drain` returned.
 */
export class DrainBuffer {
  #buffer: EventEnvelope[] = [];
  #lastObserved = 0;
  readonly #options: DrainOptions;

  constructor(options: DrainOptions) {
    this.#options = options;
  }

  /** Buffers a foreign event; drops the bot's own. Events at or below the last observed seq are ignored. */
  observe(event: EventEnvelope): void {
    if (event.seq <= this.#lastObserved) return;
    this.#lastObserved = event.seq;
    if (event.principalId === this.#options.selfPrincipalId) return;
    this.#buffer.push(event);
  }

  /** Extracts every finalized run; in-flight runs stay buffered. */
  drain(displayNames?: DrainOptions['displayNames']): DrainPayload {
    const payload = extractDrainPayload(
      this.#buffer,
      displayNames ? { ...this.#options, displayNames } : this.#options,
    );
    this.#buffer = [...payload.remaining];
    return payload;
  }

  /** Events waiting (in-flight runs, or anything observed since the last drain). */
  get pending(): readonly EventEnvelope[] {
    return this.#buffer;
  }

  /** Every observed event at or below this seq has been drained (or was the bot's own). */
  get drainedThrough(): number {
    const first = this.#buffer[0];
    return first === undefined ? this.#lastObserved : first.seq - 1;
  }
}
