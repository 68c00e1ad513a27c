import { fullJitterDelay, type BackoffOptions } from '../client/backoff.js';
import type { Credentials } from '../client/credentials.js';

/** What asking for a newer bearer came to. */
export type RenewalOutcome =
  /** A newer bearer: open a socket at once. */
  | { readonly kind: 'renewed' }
  /** A definite answer: there is no bearer any more (the person has to sign in again). */
  | { readonly kind: 'final' }
  /** It failed for a passing reason (the issuer is unreachable, or had nothing newer): try again later. */
  | { readonly kind: 'later'; readonly why: unknown };

/**
 * The live connection's side of a bearer the server refused (close 4001): renewed once per
 * refusal, never in a loop, since a second 4001 before the server is ready again is final. A
 * renewal that fails for a passing reason is tried again after a growing delay (`nextRetry`),
 * until one succeeds or the answer is definite. Holds no timer: the connection schedules.
 */
export class BearerRenewal {
  /** The bearer sent in the last `client.auth`. */
  #sent: string | undefined;
  /** Whether a renewal was used up (or the bearer found final) since the last `server.ready`. */
  #usedSinceReady = false;
  /** Renewals in a row that failed for a passing reason. */
  #failures = 0;
  readonly #credentials: Credentials;
  readonly #backoff: BackoffOptions;
  readonly #random: () => number;

  constructor(credentials: Credentials, backoff: BackoffOptions, random: () => number) {
    this.#credentials = credentials;
    this.#backoff = backoff;
    this.#random = random;
  }

  /** The bearer that went out in a `client.auth` (the one to renew if it is refused). */
  sentBearer(token: string): void {
    this.#sent = token;
  }

  /** The server accepted the bearer: the next refusal may be renewed again. */
  ready(): void {
    this.#usedSinceReady = false;
    this.#failures = 0;
  }

  /** No renewal until the server is ready again: the next refusal is final. */
  forgo(): void {
    this.#usedSinceReady = true;
  }

  /** Whether a refusal now may be answered by a renewal. */
  get available(): boolean {
    return this.#credentials.renew !== undefined && this.#sent !== undefined && !this.#usedSinceReady;
  }

  /** Asks the credentials for a newer bearer than the refused one. Uses up the renewal. */
  async renew(): Promise<RenewalOutcome> {
    this.#usedSinceReady = true;
    const rejected = this.#sent as string;
    try {
      const next = await this.#credentials.renew!(rejected);
      if (next === null) return { kind: 'final' };
      // Nothing newer than the refused bearer yet: the renewal did not happen (provider down).
      if (next === rejected) return { kind: 'later', why: new Error('no newer bearer than the refused one') };
      return { kind: 'renewed' };
    } catch (error) {
      return { kind: 'later', why: error };
    }
  }

  /** The wait before the next try after a passing failure (full jitter, growing), and its number. */
  nextRetry(): { delayMs: number; attempt: number } {
    const delayMs = fullJitterDelay(this.#failures, this.#backoff, this.#random);
    this.#failures += 1;
    return { delayMs, attempt: this.#failures };
  }
}
