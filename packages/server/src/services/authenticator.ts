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
 *
 * The cache is only as good as the news of revocations. On a database shared by several
 * instances, a revocation made on another instance arrives through the cluster outbox; an
 * instance that cannot read it (the database unreachable) would go on accepting the revoked
 * token on routes that need no database (`whoami`, a WebSocket's `client.auth`). So with
 * `cacheTrusted` the cache answers only while it says so (the server passes "the last full read
 * of the outbox started under a second ago"); otherwise every credential is checked against the
 * store, which then answers 503 while it cannot be reached. Without it (SQLite: one process, whose
 * revocations are all its own or read by `revocation-watch.ts`) the cache is always trusted.
 */
export function createAuthenticator(
  store: BubbleStore,
  bus: LiveBus,
  oidc?: OidcAuthenticator,
  now: () => number = Date.now,
  options: { cacheTrusted?: (() => boolean) | undefined } = {},
) {
  const cache = new CredentialCache();
  const trusted = options.cacheTrusted ?? (() => true);
  const cached = (key: string): Authenticated | undefined => (trusted() ? cache.get(key, now()) : undefined);
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
      return looksLikeLocalToken(token) || looksLikeJwt(token) ? cached(tokenHashKey(token)) : undefined;
    },
    async authenticate(token: string): Promise<Authenticated | AuthRefusal | null> {
      const local = looksLikeLocalToken(token);
      if (!local && !looksLikeJwt(token)) return NOT_A_TOKEN;
      if (!local && oidc === undefined) return NO_JWTS;
      const key = tokenHashKey(token);
      const hit = cached(key);
      if (hit !== undefined) return hit;
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
