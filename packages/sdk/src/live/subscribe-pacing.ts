/**
 * Most subscribes sent one by one (to a server that does not take `subscribe_batch`) that may
 * wait for their answers at once. The server closes a socket with 4008 once it has refused 50
 * frames in a row for its frame rate limit (server README, "Limits"; protocol.md only says "if it
 * goes on"): with at most this many unanswered, the queue hears of the first refusal, and stops,
 * before a socket's worth of subscribes could be refused one after another.
 */
export const PACED_WINDOW = 16;

/**
 * How fast subscribes go out one by one: at most `PACED_WINDOW` unanswered at once; a
 * `rate_limited` refusal stops them until the server's wait is over and starts again from one at
 * a time, one more per subscribe sent since then that is answered (as TCP's slow start does; the
 * answers to those sent before it say nothing of the budget now). So they go out as fast as the
 * principal's frame budget lets them, whatever its operator set it to, and no faster. Pure: the
 * clock is passed in.
 */
export class SubscribePacing {
  #window = PACED_WINDOW;
  #pausedUntilMs = 0;
  /** Refusals so far: a subscribe answered grows the window only if none came since it was sent. */
  #refusals = 0;
  /** Sent and not answered, by wire id: the refusals there had been when it was sent. */
  readonly #unanswered = new Map<string, number>();

  /** How many may be sent at `nowMs`: none while paused or while the window is full. */
  room(nowMs: number): number {
    return nowMs < this.#pausedUntilMs ? 0 : Math.max(0, this.#window - this.#unanswered.size);
  }

  /** When sending may go on again, if `room` is 0 for a pause (not for a full window). */
  get pausedUntilMs(): number {
    return this.#pausedUntilMs;
  }

  sent(wireId: string): void {
    this.#unanswered.set(wireId, this.#refusals);
  }

  /**
   * The server answered the subscribe of `wireId`; `rateLimitedMs` is its wait when it refused it
   * as `rate_limited`. Answers whether it was one sent one by one.
   */
  answered(wireId: string, rateLimitedMs: number | undefined, nowMs: number): boolean {
    const refusalsWhenSent = this.#unanswered.get(wireId);
    if (refusalsWhenSent === undefined) return false;
    this.#unanswered.delete(wireId);
    if (rateLimitedMs !== undefined) this.refused(rateLimitedMs, nowMs);
    else if (refusalsWhenSent === this.#refusals) this.#window = Math.min(PACED_WINDOW, this.#window + 1);
    return true;
  }

  /** The server refused a frame for its rate limit: nothing goes for `waitMs`, then one at a time. */
  refused(waitMs: number, nowMs: number): void {
    this.#window = 1;
    this.#refusals += 1;
    this.#pausedUntilMs = Math.max(this.#pausedUntilMs, nowMs + waitMs);
  }
}
