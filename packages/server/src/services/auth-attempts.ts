import { clientAddressKey } from '../domain/rate-limit-keys.js';
import type { RateLimiter } from '../http/rate-limiter.js';
import { isRefusal, type Authenticated, type AuthRefusal } from './auth-result.js';

/** The address has used up its failed authentications: it may try again in `retryAfterSeconds`. */
export interface TooManyFailures {
  tooManyFailures: true;
  retryAfterSeconds: number;
}

/**
 * A principal; `null` for a local token that does not resolve, or a refusal saying why a bearer
 * does not authenticate (401, 4001); or `tooManyFailures` under the failed-auth limit (429).
 */
export type AuthAttempt = Authenticated | null | AuthRefusal | TooManyFailures;

export const isTooManyFailures = (attempt: AuthAttempt): attempt is TooManyFailures =>
  attempt !== null && 'tooManyFailures' in attempt;

/**
 * Bearer authentication from a client address under the failed-authentication
 * limit (protocol.md, "Limits"), for HTTP and `client.auth` alike.
 *
 * Each token that does not resolve takes one from its address's budget (a
 * wrong JWT too; an identity provider that cannot be reached does not count,
 * since that is nobody's wrong guess); a token that resolves takes nothing. An address with nothing left is refused
 * (429, or `rate_limited` on a socket) for every token that would need a store
 * lookup, right or wrong, until its budget refills; a token already known good
 * (in the authenticator's cache of live tokens) still passes, so people who are
 * signed in behind the same address as a token-guessing loop keep working,
 * and the loop learns nothing (it cannot tell a right token from a wrong one).
 */
export function createAuthAttempts(
  authenticator: {
    known(token: string): Authenticated | undefined;
    authenticate(token: string): Promise<Authenticated | AuthRefusal | null>;
  },
  failedAuth: RateLimiter | undefined,
) {
  return async function authenticateFrom(token: string, address: string | undefined): Promise<AuthAttempt> {
    const known = authenticator.known(token);
    if (known !== undefined) return known;
    const key = clientAddressKey(address);
    const wait = failedAuth?.waitFor(key) ?? 0;
    if (wait > 0) return { tooManyFailures: true, retryAfterSeconds: wait };
    const result = await authenticator.authenticate(token);
    if (result === null || (isRefusal(result) && result.countsAsFailure)) failedAuth?.take(key);
    return result;
  };
}

export type AuthenticateFrom = ReturnType<typeof createAuthAttempts>;
