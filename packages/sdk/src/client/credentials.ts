/**
 * Where a client's bearer comes from. A local token (`bubble_user_…`, `bubble_agent_…`) never
 * changes. An access token from an identity provider expires: its owner renews it before then,
 * and again when the server refuses it (HTTP 401, WebSocket close 4001).
 *
 * The client asks `current()` before every request and every `client.auth`, so a token renewed in
 * the background is picked up at once; it calls `renew` once per refusal, never in a loop.
 *
 * Either may throw `CredentialsUnavailable` when there is no bearer *for now* (the issuer could
 * not be reached to renew it): the caller tries again later and the person stays signed in. Any
 * other throw from `current()`, and null from `renew`, is final (sign in again).
 */
export interface Credentials {
  /** The bearer to send now. */
  current(): string | Promise<string>;
  /**
   * The server refused `rejected`. Answers a bearer to try once more, or null when there is none
   * (the person has to sign in again). A source that renewed since it handed out `rejected`
   * answers the newer one without asking its issuer again. Throws `CredentialsUnavailable` (or
   * any error) when renewing failed for a passing reason: the live connection tries again later.
   */
  renew?(rejected: string): Promise<string | null>;
}

/** No bearer for now, for a passing reason (the identity provider is unreachable): try again later. */
export class CredentialsUnavailable extends Error {
  override readonly name = 'CredentialsUnavailable';
}

export function isCredentialsUnavailable(error: unknown): error is CredentialsUnavailable {
  return error instanceof CredentialsUnavailable || (error instanceof Error && error.name === 'CredentialsUnavailable');
}

/** A bearer that never changes: a refusal is final. */
export function staticCredentials(token: string): Credentials {
  return { current: () => token };
}

/**
 * The server's answer when it could not ask its identity provider whether a JWT is good (HTTP
 * 401 `unauthorized`, WebSocket close 4001, with no machine-readable marker): "the identity
 * provider <issuer> could not be reached to check this token (…); try again shortly". Matched on
 * that wording alone, from the start, so no other refusal passes for it. A 4001 reason is cut to
 * 123 bytes by the server; an issuer long enough to cut it before "could not be reached" is not
 * recognised (and is treated as a refusal, as before).
 */
const PROVIDER_UNREACHABLE = /^the identity provider \S+ could not be reached\b/;

export function isProviderUnreachableMessage(message: string): boolean {
  return PROVIDER_UNREACHABLE.test(message);
}
