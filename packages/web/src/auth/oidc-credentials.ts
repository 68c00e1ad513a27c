import { CredentialsUnavailable, type Credentials } from '@bubble/sdk/client';
import { isUsable, renewAt, type OidcSession } from './oidc-session';

export interface OidcCredentialsDeps {
  /** Trades the refresh token for a new session (the provider's token endpoint). */
  refresh(session: OidcSession): Promise<OidcSession>;
  /** Every new session (to store it), and null once the session ended (sign in again). */
  onChange(session: OidcSession | null, why?: string): void;
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

/** Why a renewal failed for good: the provider refused the refresh token (anything else is retried). */
export class SessionEnded extends Error {
  override readonly name = 'SessionEnded';
}

/** Tries again after a renewal that failed for a passing reason: 2 s, 5 s, … then every minute. */
export const RETRY_MS = [2_000, 5_000, 10_000, 30_000, 60_000];
/** The longest delay a browser's setTimeout keeps (2^31 − 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The bearer of a person signed in through an identity provider. The access token is renewed
 * with the refresh token before it expires (a timer, `renewAt`), so requests always carry a live
 * one; when the server refuses one anyway (HTTP 401, WebSocket 4001 at expiry), `renew` answers
 * the newer token if there is one, or renews at once. One renewal runs at a time.
 *
 * A renewal that fails for a passing reason (the provider is unreachable) is tried again with
 * backoff (a minute at most), also past the token's expiry: until then `current` and `renew`
 * throw `CredentialsUnavailable` and the person stays signed in. Only a definite refusal (the
 * provider answers `invalid_grant`: the refresh token was revoked or expired: `SessionEnded`),
 * or no refresh token at all once the token expires, ends the session.
 */
export class OidcCredentials implements Credentials {
  #session: OidcSession | null;
  #renewing: Promise<OidcSession> | null = null;
  #timer: unknown = null;
  #failures = 0;
  #lastFailure: string | null = null;
  readonly #deps: OidcCredentialsDeps;

  constructor(session: OidcSession, deps: OidcCredentialsDeps) {
    this.#deps = deps;
    this.#session = session;
    this.#schedule();
  }

  get session(): OidcSession | null {
    return this.#session;
  }

  /** Why the last renewal failed, while renewals keep failing for a passing reason; null otherwise. */
  get renewalTrouble(): string | null {
    return this.#lastFailure;
  }

  async current(): Promise<string> {
    const session = this.#session;
    if (session === null) throw new SessionEnded('signed out');
    if (isUsable(session, this.#deps.now())) return session.accessToken;
    return (await this.#renew()).accessToken;
  }

  async renew(rejected: string): Promise<string | null> {
    const session = this.#session;
    if (session === null) return null;
    // Renewed since that token was handed out: the newer one is the answer.
    if (session.accessToken !== rejected && isUsable(session, this.#deps.now())) return session.accessToken;
    if (session.refreshToken === undefined) {
      this.#end('Your sign-in expired. Sign in again to go on.');
      return null;
    }
    try {
      return (await this.#renew()).accessToken;
    } catch (error) {
      // A definite end is null (sign in again); a passing failure is thrown (try again later).
      if (error instanceof SessionEnded) return null;
      throw error;
    }
  }

  /** Stops renewing (sign out); the session is forgotten. */
  dispose(): void {
    this.#deps.clearTimer(this.#timer);
    this.#timer = null;
    this.#session = null;
  }

  /** The renewal in flight, if any (sign-out revokes the refresh token it brings back). */
  get pendingRenewal(): Promise<OidcSession> | null {
    return this.#renewing;
  }

  /** A new session, or throws: `SessionEnded` when the session is over, `CredentialsUnavailable` for now. */
  #renew(): Promise<OidcSession> {
    if (this.#renewing !== null) return this.#renewing;
    const session = this.#session;
    if (session === null) return Promise.reject(new SessionEnded('signed out'));
    if (session.refreshToken === undefined) {
      this.#end('Your sign-in expired. Sign in again to go on.');
      return Promise.reject(new SessionEnded('no refresh token'));
    }
    const renewing = this.#deps.refresh(session).then(
      (next) => {
        if (this.#renewing === renewing) this.#renewing = null;
        if (this.#session === null) return next;
        this.#failures = 0;
        this.#lastFailure = null;
        this.#session = next;
        this.#deps.onChange(next);
        this.#schedule();
        return next;
      },
      (error: unknown) => {
        if (this.#renewing === renewing) this.#renewing = null;
        if (this.#session === null) throw new SessionEnded('signed out');
        if (error instanceof SessionEnded) {
          this.#end('Your sign-in ended at the identity provider. Sign in again to go on.');
          throw error;
        }
        // The provider may be down for a moment: keep the session and try again later.
        const delay = RETRY_MS[Math.min(this.#failures, RETRY_MS.length - 1)]!;
        this.#failures += 1;
        this.#lastFailure = describe(error);
        this.#armAt(this.#deps.now() + delay);
        throw new CredentialsUnavailable(`the sign-in could not be renewed for now (${this.#lastFailure})`);
      },
    );
    this.#renewing = renewing;
    return renewing;
  }

  #schedule(): void {
    const session = this.#session;
    if (session === null) return;
    // Without a refresh token the session simply ends at expiry.
    this.#armAt(renewAt(session) ?? session.expiresAt);
  }

  /**
   * Acts at `at` (ms since the epoch). A browser fires a timer longer than 2^31 − 1 ms at once, so
   * a long wait is armed in steps, and a timer that fires early arms the rest.
   */
  #armAt(at: number): void {
    this.#deps.clearTimer(this.#timer);
    const ms = Math.min(MAX_TIMER_MS, Math.max(0, at - this.#deps.now()));
    this.#timer = this.#deps.setTimer(() => {
      this.#timer = null;
      const session = this.#session;
      if (session === null) return;
      if (this.#deps.now() < at) {
        this.#armAt(at);
        return;
      }
      if (session.refreshToken === undefined) {
        if (!isUsable(session, this.#deps.now())) this.#end('Your sign-in expired. Sign in again to go on.');
        else this.#armAt(session.expiresAt);
        return;
      }
      // A failure arms the next try itself.
      this.#renew().catch(() => undefined);
    }, ms);
  }

  #end(why: string): void {
    if (this.#session === null) return;
    this.dispose();
    this.#deps.onChange(null, why);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
