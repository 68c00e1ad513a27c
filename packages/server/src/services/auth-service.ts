import { rateLimited, unauthorized } from '../errors/bubble-error.js';
import { isTooManyFailures, type AuthAttempt } from './auth-attempts.js';
import { hashesEqual, hashToken, looksLikeLocalToken } from '../domain/tokens.js';
import type { BubbleStore } from '../store/store.js';
import { isRefusal, type Authenticated } from './auth-result.js';

export { isRefusal, type Authenticated, type AuthRefusal } from './auth-result.js';

/**
 * Resolves the SHA-256 of a bearer token to its principal, or null when it is
 * unknown or revoked. The digest is looked up, then compared with the stored
 * one in constant time.
 */
export async function authenticateHash(
  store: BubbleStore,
  hash: Buffer,
): Promise<(Authenticated & { tokenId: string }) | null> {
  const record = await store.findLiveTokenByHash(hash);
  if (record === null || !hashesEqual(record.hash, hash)) return null;
  const principal = await store.getPrincipal(record.principalId);
  return principal === null ? null : { principal, tokenId: record.tokenId };
}

/** Resolves a plaintext bearer token (see `authenticateHash`). */
export async function authenticateToken(store: BubbleStore, token: string): Promise<Authenticated | null> {
  if (!looksLikeLocalToken(token)) return null;
  return authenticateHash(store, hashToken(token));
}

/**
 * Reads `Authorization: Bearer <token>`; throws 401 when it is missing or does
 * not resolve (with the reason: an unknown token, an expired JWT, an identity provider that
 * cannot be reached…), and 429 when the caller's address is over its failed-auth limit
 * (see `auth-attempts.ts`). A request without a bearer costs no lookup and is
 * not counted.
 */
export async function authenticateHeader(
  authenticate: (token: string, address: string | undefined) => Promise<AuthAttempt>,
  header: string | undefined,
  address: string | undefined,
): Promise<Authenticated> {
  if (header === undefined) throw unauthorized('missing Authorization header');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw unauthorized('Authorization must be "Bearer <token>"');
  const result = await authenticate(match[1]!, address);
  if (result === null) throw unauthorized('unknown or revoked token');
  if (isRefusal(result))
    throw unauthorized(result.message, result.reason === undefined ? undefined : { reason: result.reason });
  if (isTooManyFailures(result)) {
    throw rateLimited(
      `too many failed authentications from this address; retry in ${result.retryAfterSeconds} s`,
      result.retryAfterSeconds,
    );
  }
  return result;
}
