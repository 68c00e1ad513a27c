import { createHash, randomBytes } from 'node:crypto';
import { authenticateToken, type BubbleStore } from '@bubble/server';

/**
 * Tokens the launcher gives its own principals straight through the store: it
 * owns the bot (and the human it made), and the store is in its process, so a
 * token revoked in the web UI can be replaced without any other credential.
 *
 * The server keeps only the SHA-256 of a token; the format below (prefix and
 * 32 random bytes, base64url) is the server's own (`domain/tokens.ts`), and
 * every minted token is checked through the server's `authenticateToken`
 * before it is used, so a change of format there fails here loudly.
 * TODO(lead): `@bubble/server` could export its `mintPrincipalToken` instead.
 */
const PREFIXES = { bot: 'bubble_agent_', human: 'bubble_user_' } as const;

/** Whether the store still accepts the token (not revoked, principal there). */
export async function tokenWorks(store: BubbleStore, token: string, principalId: string): Promise<boolean> {
  const found = await authenticateToken(store, token);
  return found !== null && found.principal.principalId === principalId;
}

/** A new token for the principal; its plaintext is returned once. */
export async function mintStoreToken(
  store: BubbleStore,
  principalId: string,
): Promise<{ tokenId: string; token: string }> {
  const principal = await store.getPrincipal(principalId);
  if (principal === null) throw new Error(`principal ${principalId} is not in the database`);
  const token = `${PREFIXES[principal.kind === 'bot' ? 'bot' : 'human']}${randomBytes(32).toString('base64url')}`;
  const tokenId = `tok_${randomBytes(12).toString('base64url')}`;
  await store.addToken({ tokenId, principalId, hash: createHash('sha256').update(token).digest() });
  if (!(await tokenWorks(store, token, principalId)))
    throw new Error(`a token minted for ${principalId} is not accepted by the server; the token format has changed`);
  return { tokenId, token };
}
