import type { Principal, Token } from '@bubble/protocol';
import { notFound } from '../errors/bubble-error.js';
import { newTokenId } from '../domain/ids.js';
import { hashToken, mintTokenSecret } from '../domain/tokens.js';
import type { BubbleStore } from '../store/store.js';

/**
 * The operator's commands on the principals of a database, run by `bubble-server principal …`
 * while the server may be running on the same file (SQLite WAL lets both write; the server learns
 * of revocations through the revocation log, see `services/revocation-watch.ts`).
 */

/** `principal list`: every principal, ordered by id. */
export const listPrincipals = (store: BubbleStore): Promise<Principal[]> => store.listPrincipals();

/** `principal mint-token <id>`: a new token of a human or a bot, its plaintext returned once. */
export async function mintPrincipalToken(
  store: BubbleStore,
  principalId: string,
): Promise<{ principal: Principal; token: Token }> {
  const principal = await store.getPrincipal(principalId);
  if (principal === null) throw notFound(`principal ${principalId} not found`);
  const secret = mintTokenSecret(principal.kind);
  const record = await store.addToken({ tokenId: newTokenId(), principalId, hash: hashToken(secret) });
  return { principal, token: { tokenId: record.tokenId, token: secret, createdAt: record.createdAt } };
}

/**
 * `principal revoke-tokens <id>`: every live token of the principal, and, for a person who signs
 * in with the identity provider, every JWT issued before now (`jwtsIssuedBefore`; null for a
 * principal no JWT maps to), at once. A new sign-in after it works.
 */
export async function revokePrincipalTokens(
  store: BubbleStore,
  principalId: string,
): Promise<{ principalId: string; revokedTokenIds: string[]; jwtsIssuedBefore: string | null }> {
  if ((await store.getPrincipal(principalId)) === null) throw notFound(`principal ${principalId} not found`);
  return { principalId, ...(await store.revokeAllCredentials(principalId)) };
}
