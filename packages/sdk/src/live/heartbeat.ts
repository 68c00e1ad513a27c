/**
 * Notices a connection that went silent without closing: every `intervalMs` it sends a ping,
 * and if no frame at all arrives within `timeoutMs` after it, it reports the link dead. Any
 * inbound frame counts as a sign of life, so a busy socket is never declared dead.
 */
export class Heartbeat {
  #intervalTimer: NodeJS.Timeout | undefined;
  #answerTimer: NodeJS.Timeout | undefined;
  #inbound = 0;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #sendPing: () => void;
  readonly #onDead: () => void;

  constructor(intervalMs: number, timeoutMs: number, sendPing: () => void, onDead: () => void) {
    this.#intervalMs = intervalMs;
    this.#timeoutMs = timeoutMs;
    this.#sendPing = sendPing;
    this.#onDead = onDead;
  }

  /** Counts an inbound frame. */
  seen(): void {
    this.#inbound += 1;
  }

  start(): void {
    this.stop();
    this.#intervalTimer = setInterval(() => {
      if (this.#answerTimer !== undefined) return;
      const seenAtPing = this.#inbound;
      this.#sendPing();
      this.#answerTimer = setTimeout(() => {
        this.#answerTimer = undefined;
        if (this.#inbound === seenAtPing) this.#onDead();
      }, this.#timeoutMs);
    }, this.#intervalMs);
  }

  stop(): void {
    clearInterval(this.#intervalTimer);
    clearTimeout(this.#answerTimer);
    this.#intervalTimer = undefined;
    this.#answerTimer = undefined;
  }
}
