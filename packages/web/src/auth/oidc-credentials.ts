import type { Credentials } from '@bubble/sdk/client';
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

const RETRY_MS = [2_000, 5_000, 10_000, 30_000];

/**
 * The bearer of a person signed in through an identity provider. The access token is renewed
 * with the refresh token before it expires (a timer, `renewAt`), so requests always carry a live
 * one; when the server refuses one anyway (HTTP 401, WebSocket 4001 at expiry), `renew` answers
 * the newer token if there is one, or renews at once. One renewal runs at a time.
 *
 * A renewal that fails for a passing reason (the provider is unreachable) is tried again while
 * the token lasts; one the provider refuses (`invalid_grant`: the refresh token was revoked or
 * expired), or no refresh token at all once the token expires, ends the session.
 */
export class OidcCredentials implements Credentials {
  #session: OidcSession | null;
  #renewing: Promise<OidcSession | null> | null = null;
  #timer: unknown = null;
  #failures = 0;

  constructor(
    session: OidcSession,
    private readonly deps: OidcCredentialsDeps,
  ) {
    this.#session = session;
    this.#schedule();
  }

  get session(): OidcSession | null {
    return this.#session;
  }

  async current(): Promise<string> {
    const session = this.#session;
    if (session === null) throw new SessionEnded('signed out');
    if (isUsable(session, this.deps.now())) return session.accessToken;
    const renewed = await this.#renew();
    if (renewed === null) throw new SessionEnded('the sign-in expired');
    return renewed.accessToken;
  }

  async renew(rejected: string): Promise<string | null> {
    const session = this.#session;
    if (session === null) return null;
    // Renewed since that token was handed out: the newer one is the answer.
    if (session.accessToken !== rejected && isUsable(session, this.deps.now())) return session.accessToken;
    if (session.refreshToken === undefined) {
      this.#end('Your sign-in expired. Sign in again to go on.');
      return null;
    }
    return (await this.#renew())?.accessToken ?? null;
  }

  /** Stops renewing (sign out); the session is forgotten. */
  dispose(): void {
    this.deps.clearTimer(this.#timer);
    this.#timer = null;
    this.#session = null;
  }

  #renew(): Promise<OidcSession | null> {
    if (this.#renewing !== null) return this.#renewing;
    const session = this.#session;
    if (session === null) return Promise.resolve(null);
    if (session.refreshToken === undefined) {
      this.#end('Your sign-in expired. Sign in again to go on.');
      return Promise.resolve(null);
    }
    this.#renewing = this.deps.refresh(session).then(
      (next) => {
        this.#renewing = null;
        if (this.#session === null) return null;
        this.#failures = 0;
        this.#session = next;
        this.deps.onChange(next);
        this.#schedule();
        return next;
      },
      (error: unknown) => {
        this.#renewing = null;
        if (this.#session === null) return null;
        if (error instanceof SessionEnded || !isUsable(session, this.deps.now())) {
          this.#end(error instanceof SessionEnded ? 'Your sign-in ended at the identity provider. Sign in again to go on.' : 'Your sign-in expired and could not be renewed. Sign in again to go on.');
          return null;
        }
        // The provider may be down for a moment: the token still works, so try again soon.
        const delay = RETRY_MS[Math.min(this.#failures, RETRY_MS.length - 1)]!;
        this.#failures += 1;
        this.#arm(Math.min(delay, Math.max(0, session.expiresAt - this.deps.now() - 1_000)));
        return session;
      },
    );
    return this.#renewing;
  }

  #schedule(): void {
    const session = this.#session;
    if (session === null) return;
    const at = renewAt(session);
    // Without a refresh token the session simply ends at expiry.
    const when = at ?? session.expiresAt;
    this.#arm(Math.max(0, when - this.deps.now()));
  }

  #arm(ms: number): void {
    this.deps.clearTimer(this.#timer);
    this.#timer = this.deps.setTimer(() => {
      this.#timer = null;
      const session = this.#session;
      if (session === null) return;
      if (session.refreshToken === undefined) {
        if (!isUsable(session, this.deps.now())) this.#end('Your sign-in expired. Sign in again to go on.');
        else this.#arm(Math.max(0, session.expiresAt - this.deps.now()));
        return;
      }
      void this.#renew();
    }, ms);
  }

  #end(why: string): void {
    if (this.#session === null) return;
    this.dispose();
    this.deps.onChange(null, why);
  }
}
