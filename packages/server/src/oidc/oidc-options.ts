/**
 * Signing people in with an identity provider (protocol.md, Authentication): the server
 * accepts the issuer's JWT access tokens for `audience` beside its local tokens, and tells
 * browsers about it in `GET /v1/info` (`auth.oidc`).
 */
export interface OidcOptions {
  /** The issuer exactly as the provider names itself (Auth0: `https://TENANT.auth0.com/`, with the slash). */
  issuer: string;
  /** The API identifier access tokens must carry in `aud`. */
  audience: string;
  /** The public client a browser signs in with (shown in `/v1/info`; tokens of any client for the audience are accepted). */
  clientId: string;
  /** How far the server's clock may be from the issuer's, for `exp` and `nbf`. Default 30 s. */
  clockToleranceSeconds?: number;
  /** The least time between two JWKS fetches caused by a token with an unknown `kid`. Default 30 s. */
  jwksCooldownMs?: number;
  /** How long a fetched JWKS is used before it is fetched again. Default 10 min. */
  jwksCacheMaxAgeMs?: number;
  /** How long a request to the identity provider (discovery, JWKS) may take. Default 5 s. */
  fetchTimeoutMs?: number;
  /** How long after a failed request to the provider the same URL is not asked again (tokens needing it get 401 at once). Default 1 s. */
  retryAfterFailureMs?: number;
  /**
   * How old the last JWKS fetched may be and still be used when fetching it again fails (the
   * provider is down past `jwksCacheMaxAgeMs`): tokens signed with a key in it keep working that
   * long after it was fetched. Default 24 h.
   */
  jwksMaxStaleMs?: number;
}

export const OIDC_DEFAULTS = Object.freeze({
  clockToleranceSeconds: 30,
  jwksCooldownMs: 30_000,
  jwksCacheMaxAgeMs: 10 * 60_000,
  fetchTimeoutMs: 5_000,
  retryAfterFailureMs: 1_000,
  jwksMaxStaleMs: 24 * 3600_000,
});

/** Issuers compared the way people write them: with or without one trailing slash. */
export const sameIssuer = (a: string, b: string): boolean => a.replace(/\/$/, '') === b.replace(/\/$/, '');

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether a URL is plain http to this machine (a provider run locally): the one place http is allowed. */
export const isHttpOnLoopback = (url: URL): boolean => url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
