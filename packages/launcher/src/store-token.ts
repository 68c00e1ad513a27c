import { authenticateToken, type BubbleStore, mintPrincipalToken } from '@bubble/server';

/**
 * Tokens the launcher gives its own principals straight through the store: it owns the bot (and
 * the human it made), and the store is in its process, so a token revoked in the web UI can be
 * replaced without any other credential. Minted by the server's own `principal mint-token`.
 */

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
  const { token } = await mintPrincipalToken(store, principalId);
  return { tokenId: token.tokenId, token: token.token };
}
