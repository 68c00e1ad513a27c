import type { Clock } from '../translate/delta-coalescer.js';

/** One timer on a clock that is armed again and again: arming replaces what was armed; it fires at most once per arming. */
export class OneShotTimer {
  readonly #clock: Clock;
  #handle: unknown;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get armed(): boolean {
    return this.#handle !== undefined;
  }

  arm(ms: number, fire: () => void): void {
    this.clear();
    this.#handle = this.#clock.setTimeout(() => {
      this.#handle = undefined;
      fire();
    }, ms);
  }

  clear(): void {
    if (this.#handle !== undefined) this.#clock.clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}
