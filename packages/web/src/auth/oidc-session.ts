import { parseStoredRecord } from './stored-record';

/**
 * A person's sign-in through an identity provider, as one value: the access token the server
 * takes as the bearer, when it expires, and what renews it. Times are this browser's clock (the
 * lifetime is the provider's `expires_in`, counted from when the answer arrived), so a skewed
 * clock does not shorten or stretch it.
 */
export interface OidcSession {
  readonly issuer: string;
  readonly clientId: string;
  readonly accessToken: string;
  /** When the access token arrived and when it expires, in ms since the epoch. */
  readonly receivedAt: number;
  readonly expiresAt: number;
  /** Present when the provider issued one (scope `offline_access`); rotated ones replace it. */
  readonly refreshToken?: string;
  /** Kept for sign-out (`id_token_hint`). */
  readonly idToken?: string;
  /** The provider's discovered `end_session_endpoint`, kept for a sign-out when discovery fails then. */
  readonly endSessionEndpoint?: string;
}

/** The fields of a token endpoint answer this app reads. */
export interface TokenAnswer {
  readonly access_token: string;
  readonly expires_in?: number;
  readonly refresh_token?: string;
  readonly id_token?: string;
}

/** Renewal starts this long before expiry, at most; a quarter of a short lifetime. */
export const RENEW_MARGIN_MS = 60_000;
/** A token this close to expiry is not sent any more (the server's clock may run ahead). */
export const EXPIRY_GUARD_MS = 5_000;
const FALLBACK_LIFETIME_S = 300;

/**
 * The session after a token answer. A refresh answer without a new refresh token keeps the old
 * one (a provider that does not rotate), and one without an ID token keeps the old ID token.
 */
export function sessionFromAnswer(
  base: Pick<OidcSession, 'issuer' | 'clientId'> & Partial<OidcSession>,
  answer: TokenAnswer,
  now: number,
): OidcSession {
  const lifetimeS =
    typeof answer.expires_in === 'number' && answer.expires_in > 0
      ? answer.expires_in
      : (jwtLifetimeSeconds(answer.access_token) ?? FALLBACK_LIFETIME_S);
  const refreshToken = answer.refresh_token ?? base.refreshToken;
  const idToken = answer.id_token ?? base.idToken;
  const endSessionEndpoint = base.endSessionEndpoint;
  return {
    issuer: base.issuer,
    clientId: base.clientId,
    accessToken: answer.access_token,
    receivedAt: now,
    expiresAt: now + lifetimeS * 1000,
    ...(refreshToken !== undefined ? { refreshToken } : {}),
    ...(idToken !== undefined ? { idToken } : {}),
    ...(endSessionEndpoint !== undefined ? { endSessionEndpoint } : {}),
  };
}

/** When to renew: a minute before expiry, or at three quarters of a short lifetime. Null without a refresh token. */
export function renewAt(session: OidcSession): number | null {
  if (session.refreshToken === undefined) return null;
  const lifetime = Math.max(0, session.expiresAt - session.receivedAt);
  return session.expiresAt - Math.min(RENEW_MARGIN_MS, lifetime / 4);
}

/** Whether the access token may still be sent. */
export function isUsable(session: OidcSession, now: number): boolean {
  return now < session.expiresAt - EXPIRY_GUARD_MS;
}

/** A stored session, or null for anything that is not one (storage is input from outside). */
export function parseSession(text: string | null): OidcSession | null {
  const v = parseStoredRecord(text);
  if (v === null) return null;
  const strings = ['issuer', 'clientId', 'accessToken'] as const;
  if (!strings.every((k) => typeof v[k] === 'string' && v[k] !== '')) return null;
  if (typeof v.receivedAt !== 'number' || typeof v.expiresAt !== 'number') return null;
  for (const k of ['refreshToken', 'idToken', 'endSessionEndpoint'] as const)
    if (v[k] !== undefined && typeof v[k] !== 'string') return null;
  return {
    issuer: v.issuer as string,
    clientId: v.clientId as string,
    accessToken: v.accessToken as string,
    receivedAt: v.receivedAt,
    expiresAt: v.expiresAt,
    ...(typeof v.refreshToken === 'string' ? { refreshToken: v.refreshToken } : {}),
    ...(typeof v.idToken === 'string' ? { idToken: v.idToken } : {}),
    ...(typeof v.endSessionEndpoint === 'string' && /^https?:\/\//.test(v.endSessionEndpoint)
      ? { endSessionEndpoint: v.endSessionEndpoint }
      : {}),
  };
}

/** `exp − iat` of a JWT access token, when the answer has no `expires_in`; no verification (the server verifies). */
function jwtLifetimeSeconds(token: string): number | null {
  const payload = token.split('.')[1];
  if (payload === undefined) return null;
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown; iat?: unknown };
    if (typeof claims.exp === 'number' && typeof claims.iat === 'number' && claims.exp > claims.iat)
      return claims.exp - claims.iat;
  } catch {
    // not a JWT
  }
  return null;
}
