import type { Grant } from '@bubble/protocol';
import type { Logger } from 'pino';
import type { PresenceRegistry } from '../presence/presence-registry.js';

/** How long a principal's going offline waits before it is told, in case it comes straight back. Default 500 ms. */
export const DEFAULT_PRESENCE_GRACE_MS = 500;

export interface PresenceFanoutOptions {
  registry: PresenceRegistry;
  /** The live grants of a principal: its presence goes to the subscriptions of those threads only. */
  listLiveGrants(principalId: string): Promise<Grant[]>;
  /**
   * Hands one presence change to every live subscription of one thread on this instance that
   * joined before mark `at` was taken (see `mark`) and, when `joinedAfter` is given, not before that mark.
   */
  deliver(threadId: string, principalId: string, online: boolean, at: number, joinedAfter?: number): void;
  /** A new mark, later than every one before it and than the one each subscription took when it joined. */
  mark(): number;
  /** Whether this instance has any thread subscription at all (none: no grants are read). */
  serving(): boolean;
  graceMs: number;
  logger: Logger;
}

/**
 * Turns presence changes (`PresenceRegistry.onChange`) into `presence` frames on the thread
 * subscriptions of the threads where that principal holds a live grant, and nowhere else.
 *
 * - Going offline is told after `graceMs` (500 ms by default): a principal whose last socket
 *   closes and whose next one authenticates within that time (a reconnect) is told neither way,
 *   so its threads do not see it flap. Coming online is told at once. Only the frames wait: the
 *   participants route and `isOnline` answer what holds now.
 * - Each principal's changes go out in the order they happened (one chain per principal), each
 *   after one read of its live grants, so a thread gets the last word.
 * - A subscription is told only the changes that happen after it joined (each change takes a
 *   mark when it happens; each subscription took one when it joined): what held before, the
 *   participants route says, even if its frame is still on its way to older subscriptions.
 * - A grant added while its principal is online (or within its grace) tells that thread's
 *   subscriptions `online: true` at once, through the same chain: the new participant's presence
 *   is known without reading the participants route again. A role change does it too (its bus
 *   message cannot be told from a new grant); a repeated `online: true` changes nothing for a
 *   client. A revoked grant tells nothing: the principal did not go offline, it left.
 */
export class PresenceFanout {
  readonly #options: PresenceFanoutOptions;
  /** Principals gone offline and not told yet: the timer that tells it, and the mark of going. */
  readonly #pendingOffline = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  readonly #chains = new Map<string, Promise<void>>();
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(options: PresenceFanoutOptions) {
    this.#options = options;
    this.#unsubscribe = options.registry.onChange((principalId, online) => this.#changed(principalId, online));
  }

  /** A grant was added (or its role changed): that thread's subscribers learn the participant is online, if it is. */
  grantAdded(grant: Grant): void {
    if (this.#closed || !this.#told(grant.principalId)) return;
    const at = this.#options.mark();
    this.#chain(grant.principalId, async () => {
      if (this.#told(grant.principalId)) this.#options.deliver(grant.threadId, grant.principalId, true, at);
    });
  }

  /** Stops every timer; nothing more is sent. */
  close(): void {
    this.#closed = true;
    this.#unsubscribe();
    for (const { timer } of this.#pendingOffline.values()) clearTimeout(timer);
    this.#pendingOffline.clear();
  }

  /** Whether the threads have been (or are being) told the principal is online. */
  #told(principalId: string): boolean {
    return this.#options.registry.isOnline(principalId) || this.#pendingOffline.has(principalId);
  }

  #changed(principalId: string, online: boolean): void {
    if (this.#closed) return;
    const at = this.#options.mark();
    if (online) {
      const pending = this.#pendingOffline.get(principalId);
      if (pending !== undefined) {
        // Back within the grace: nobody was told it went. Those who subscribed meanwhile read the
        // participants route while it was offline, so they, and only they, are told it is back.
        clearTimeout(pending.timer);
        this.#pendingOffline.delete(principalId);
        this.#announce(principalId, true, at, pending.at);
        return;
      }
      this.#announce(principalId, true, at);
      return;
    }
    if (this.#options.graceMs <= 0) {
      this.#announce(principalId, false, at);
      return;
    }
    if (this.#pendingOffline.has(principalId)) return;
    const timer = setTimeout(() => {
      this.#pendingOffline.delete(principalId);
      // Marked now, not when it went: a subscription that joined during the grace (and may have
      // been told it online by a grant) is told too.
      this.#announce(principalId, false, this.#options.mark());
    }, this.#options.graceMs);
    timer.unref();
    this.#pendingOffline.set(principalId, { timer, at });
  }

  #announce(principalId: string, online: boolean, at: number, joinedAfter?: number): void {
    if (this.#closed || !this.#options.serving()) return;
    this.#chain(principalId, async () => {
      const grants = await this.#options.listLiveGrants(principalId);
      if (this.#closed) return;
      for (const grant of grants) this.#options.deliver(grant.threadId, principalId, online, at, joinedAfter);
    });
  }

  #chain(principalId: string, step: () => Promise<void>): void {
    const previous = this.#chains.get(principalId) ?? Promise.resolve();
    const next = previous.then(step).catch((error: unknown) => {
      // Lost for now; the participants route still answers who is online.
      this.#options.logger.warn({ err: error, principalId }, 'presence could not be sent');
    });
    this.#chains.set(principalId, next);
    void next.then(() => {
      if (this.#chains.get(principalId) === next) this.#chains.delete(principalId);
    });
  }
}
