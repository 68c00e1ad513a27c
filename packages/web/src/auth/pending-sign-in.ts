import { parseStoredRecord } from './stored-record';

/**
 * What this tab remembers while it is away at the identity provider: the PKCE verifier, the
 * `state` and `nonce` the answer must carry back, and where to return. Kept in sessionStorage
 * (the redirect comes back to the same tab), read once, and void after ten minutes.
 */
export interface PendingSignIn {
  readonly issuer: string;
  readonly clientId: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  /** A path of this app to land on afterwards. */
  readonly returnTo: string;
  readonly startedAt: number;
}

export const PENDING_SIGN_IN_TTL_MS = 10 * 60_000;

/** The path where the provider sends the person back (registered as the app's callback URL). */
export const CALLBACK_PATH = '/auth/callback';

/** A stored pending sign-in that is still fresh, or null. */
export function parsePendingSignIn(text: string | null, now: number): PendingSignIn | null {
  const v = parseStoredRecord(text);
  if (v === null) return null;
  for (const k of ['issuer', 'clientId', 'state', 'nonce', 'codeVerifier', 'returnTo'] as const)
    if (typeof v[k] !== 'string' || v[k] === '') return null;
  if (typeof v.startedAt !== 'number' || now - v.startedAt > PENDING_SIGN_IN_TTL_MS || v.startedAt > now + 60_000)
    return null;
  return {
    issuer: v.issuer as string,
    clientId: v.clientId as string,
    state: v.state as string,
    nonce: v.nonce as string,
    codeVerifier: v.codeVerifier as string,
    returnTo: safeReturnPath(v.returnTo as string),
    startedAt: v.startedAt,
  };
}

/**
 * A path of this app, or `/`: never another origin (`//evil.example`, `https://…`, `/\evil`),
 * and never the callback itself (which would loop).
 */
export function safeReturnPath(path: string): string {
  if (!path.startsWith('/') || path.startsWith('//') || path.startsWith('/\\')) return '/';
  let parsed: URL;
  try {
    parsed = new URL(path, 'http://app.invalid');
  } catch {
    return '/';
  }
  if (parsed.origin !== 'http://app.invalid' || parsed.pathname === CALLBACK_PATH) return '/';
  // Checked again once normalised: `/.//evil.example/x` becomes `//evil.example/x`, which the
  // browser reads as another origin.
  const result = `${parsed.pathname}${parsed.search}`;
  if (result.startsWith('//') || result.startsWith('/\\')) return '/';
  return result;
}
