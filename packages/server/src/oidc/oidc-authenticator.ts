import type { Logger } from 'pino';
import { displayNameFromClaims, principalIdBase, principalIdCandidates } from '../domain/oidc-principal-id.js';
import type { Authenticated, AuthRefusal } from '../services/auth-service.js';
import type { BubbleStore } from '../store/store.js';
import { createJwtVerifier } from './jwt-verifier.js';
import type { OidcOptions } from './oidc-options.js';

/**
 * A person's JWT access token to their principal: the token is verified (`jwt-verifier.ts`),
 * then `(iss, sub)` is looked up, and on the first sign-in the human is created with the id
 * derived from the claims (`domain/oidc-principal-id.ts`). A `name` claim other than the one
 * last seen renames the principal. A JWT issued (`iat`) before the subject's `jwtsNotBefore`
 * (set by the operator's `principal revoke-tokens`) is refused, as is one without `iat` once
 * that is set; a token issued in the same second as the revocation counts as before it.
 * Nothing is cached here (the authenticator caches answers).
 */
export function createOidcAuthenticator(
  store: BubbleStore,
  options: OidcOptions,
  logger?: Logger,
  now: () => number = Date.now,
) {
  const verifier = createJwtVerifier(options, now);
  return {
    prefetch: () => verifier.prefetch(),
    browserOrigins: () => verifier.browserOrigins(),
    async authenticate(token: string): Promise<Authenticated | AuthRefusal> {
      const check = await verifier.verify(token);
      if (!check.ok) {
        return check.reason === 'invalid'
          ? { refused: true, message: check.message, countsAsFailure: true }
          : { refused: true, message: check.message, countsAsFailure: false, reason: 'identity_provider_unreachable' };
      }
      const { claims, issuer } = check;
      const issuedAt = typeof claims.iat === 'number' ? claims.iat * 1000 : undefined;
      const nameClaim = displayNameFromClaims(claims);
      const known = await store.findOidcSubject(issuer, claims.sub);
      if (known?.jwtsNotBefore != null && (issuedAt === undefined || issuedAt < Date.parse(known.jwtsNotBefore))) {
        return {
          refused: true,
          message: `this JWT was revoked: the server's operator ended every sign-in of ${known.principal.principalId} made before ${known.jwtsNotBefore}; sign in again`,
          countsAsFailure: true,
        };
      }
      const accepted = {
        tokenId: null,
        acceptedUntil: check.acceptedUntil,
        issuedAt,
      };
      if (known !== null && (nameClaim === null || nameClaim === known.nameClaim))
        return { principal: known.principal, ...accepted };
      const { principal, created } = await store.resolveOidcSubject({
        issuer,
        subject: claims.sub,
        idCandidates: principalIdCandidates(principalIdBase(claims)),
        nameClaim,
      });
      if (created)
        logger?.info(
          { principalId: principal.principalId, issuer, subject: claims.sub },
          'first sign-in: principal created',
        );
      return { principal, ...accepted };
    },
  };
}

export type OidcAuthenticator = ReturnType<typeof createOidcAuthenticator>;
