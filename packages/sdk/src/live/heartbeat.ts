/**
 * Notices a connection that went silent without closing: every `intervalMs` it sends a ping,
 * and if no frame at all arrives within `timeoutMs` after it, it reports the link dead. Any
 * inbound frame counts as a sign of life, so a busy socket is never declared dead.
 */
export class Heartbeat {
  private intervalTimer: NodeJS.Timeout | undefined;
  private answerTimer: NodeJS.Timeout | undefined;
  private inbound = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    private readonly sendPing: () => void,
    private readonly onDead: () => void,
  ) {}

  /** Counts an inbound frame. */
  seen(): void {
    this.inbound += 1;
  }

  start(): void {
    this.stop();
    this.intervalTimer = setInterval(() => {
      if (this.answerTimer !== undefined) return;
      const seenAtPing = this.inbound;
      this.sendPing();
      this.answerTimer = setTimeout(() => {
        this.answerTimer = undefined;
        if (this.inbound === seenAtPing) this.onDead();
      }, this.timeoutMs);
    }, this.intervalMs);
  }

  stop(): void {
    clearInterval(this.intervalTimer);
    clearTimeout(this.answerTimer);
    this.intervalTimer = undefined;
    this.answerTimer = undefined;
  }
}
