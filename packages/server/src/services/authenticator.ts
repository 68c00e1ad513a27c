import type { LiveBus } from '../live/live-bus.js';
import type { BubbleStore } from '../store/store.js';
import { looksLikeLocalToken, tokenHashKey } from '../domain/tokens.js';
import { authenticateHash, type Authenticated } from './auth-service.js';

const MAX_CACHED = 10_000;

/**
 * Token authentication with a cache of positive answers, keyed by the token's
 * SHA-256 (the plaintext is not kept). An entry is dropped the moment the store commits the
 * token's revocation (the `tokens_revoked` message is published right after
 * COMMIT, before the revoking request is answered), so a revoked token still
 * fails at once. Principals never change once created, so nothing else
 * invalidates an entry. Unknown tokens are never cached.
 */
export function createAuthenticator(store: BubbleStore, bus: LiveBus) {
  const byToken = new Map<string, Authenticated>();
  const tokensById = new Map<string, string>();
  const unsubscribe = bus.subscribe((message) => {
    if (message.kind !== 'tokens_revoked') return;
    for (const tokenId of message.tokenIds) {
      const key = tokensById.get(tokenId);
      if (key === undefined) continue;
      tokensById.delete(tokenId);
      byToken.delete(key);
    }
  });
  // A revocation that commits while a lookup is in flight must not be undone by caching that lookup's result.
  let revocations = 0;
  const countRevocations = bus.subscribe((message) => {
    if (message.kind === 'tokens_revoked') revocations += 1;
  });

  return {
    /** The cached answer for a token that authenticated before and is not revoked since; never touches the store. */
    known(token: string): Authenticated | undefined {
      return looksLikeLocalToken(token) ? byToken.get(tokenHashKey(token)) : undefined;
    },
    async authenticate(token: string): Promise<Authenticated | null> {
      if (!looksLikeLocalToken(token)) return null;
      const key = tokenHashKey(token);
      const cached = byToken.get(key);
      if (cached !== undefined) return cached;
      const seen = revocations;
      const result = await authenticateHash(store, Buffer.from(key, 'base64'));
      if (result !== null && seen === revocations) {
        if (byToken.size >= MAX_CACHED) {
          byToken.clear();
          tokensById.clear();
        }
        byToken.set(key, result);
        tokensById.set(result.tokenId, key);
      }
      return result;
    },
    close(): void {
      unsubscribe();
      countRevocations();
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
