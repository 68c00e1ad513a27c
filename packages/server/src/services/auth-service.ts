import type { Principal } from '@bubble/protocol';
import { unauthorized } from '../errors/bubble-error.js';
import { hashesEqual, hashToken, looksLikeLocalToken } from '../domain/tokens.js';
import type { BubbleStore } from '../store/store.js';

export interface Authenticated {
  principal: Principal;
  tokenId: string;
}

/**
 * Resolves a bearer token to its principal, or null when it is unknown or
 * revoked. Only the SHA-256 of the token is looked up; the stored digest is
 * then compared in constant time.
 */
export async function authenticateToken(store: BubbleStore, token: string): Promise<Authenticated | null> {
  if (!looksLikeLocalToken(token)) return null;
  const hash = hashToken(token);
  const record = await store.findLiveTokenByHash(hash);
  if (record === null || !hashesEqual(record.hash, hash)) return null;
  const principal = await store.getPrincipal(record.principalId);
  return principal === null ? null : { principal, tokenId: record.tokenId };
}

/** Reads `Authorization: Bearer <token>`; throws 401 when it is missing or does not resolve. */
export async function authenticateHeader(store: BubbleStore, header: string | undefined): Promise<Authenticated> {
  if (header === undefined) throw unauthorized('missing Authorization header');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw unauthorized('Authorization must be "Bearer <token>"');
  const result = await authenticateToken(store, match[1]!);
  if (result === null) throw unauthorized('unknown or revoked token');
  return result;
}
