import type { LiveBus } from '../live/live-bus.js';
import type { BubbleStore } from '../store/store.js';
import { looksLikeJwt, looksLikeLocalToken, tokenHashKey } from '../domain/tokens.js';
import type { OidcAuthenticator } from '../oidc/oidc-authenticator.js';
import { authenticateHash, isRefusal, type Authenticated, type AuthRefusal } from './auth-service.js';
import { CredentialCache } from './credential-cache.js';

const NOT_A_TOKEN: AuthRefusal = {
  refused: true,
  message: 'the bearer is neither a Bubble token (bubble_user_… or bubble_agent_…) nor a JWT',
  countsAsFailure: true,
};
const NO_JWTS: AuthRefusal = {
  refused: true,
  message: 'this server accepts no JWTs: it has no identity provider configured (bubble-server serve --oidc-issuer)',
  countsAsFailure: true,
};

/**
 * Bearer authentication: local tokens (looked up by SHA-256) and, where an identity provider is
 * configured, its JWTs (`oidc/oidc-authenticator.ts`). Positive answers are cached (see
 * `CredentialCache`): a local token until its revocation commits (the `tokens_revoked` message
 * is published right after COMMIT, before the revoking request is answered; revocations made by
 * another process arrive the same way through `revocation-watch.ts`), a JWT until it expires
 * or the person's JWTs are revoked (`jwts_revoked`: the next use is checked again).
 * A rename (`principal_updated`) updates the cached principal. Failures are never cached.
 */
export function createAuthenticator(
  store: BubbleStore,
  bus: LiveBus,
  oidc?: OidcAuthenticator,
  now: () => number = Date.now,
) {
  const cache = new CredentialCache();
  // A revocation that commits while a lookup is in flight must not be undone by caching that lookup's result.
  let revocations = 0;
  const unsubscribe = bus.subscribe((message) => {
    if (message.kind === 'tokens_revoked') {
      revocations += 1;
      cache.dropTokens(message.tokenIds);
    } else if (message.kind === 'jwts_revoked') {
      revocations += 1;
      cache.dropJwtsOf(message.principalId);
    } else if (message.kind === 'principal_updated') {
      cache.updatePrincipal(message.principal);
    }
  });

  return {
    /** The cached answer for a credential that authenticated before and is still accepted; never touches the store or the network. */
    known(token: string): Authenticated | undefined {
      return looksLikeLocalToken(token) || looksLikeJwt(token) ? cache.get(tokenHashKey(token), now()) : undefined;
    },
    async authenticate(token: string): Promise<Authenticated | AuthRefusal | null> {
      const local = looksLikeLocalToken(token);
      if (!local && !looksLikeJwt(token)) return NOT_A_TOKEN;
      if (!local && oidc === undefined) return NO_JWTS;
      const key = tokenHashKey(token);
      const cached = cache.get(key, now());
      if (cached !== undefined) return cached;
      const seen = revocations;
      if (!local) {
        const result = await oidc!.authenticate(token);
        if (!isRefusal(result) && seen === revocations) cache.set(key, result);
        return result;
      }
      const result = await authenticateHash(store, Buffer.from(key, 'base64'));
      if (result !== null && seen === revocations) cache.set(key, result);
      return result;
    },
    close(): void {
      unsubscribe();
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
