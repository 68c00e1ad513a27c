import type { Principal } from '@bubble/protocol';
import type { Authenticated } from './auth-service.js';

const MAX_ENTRIES = 10_000;

/**
 * Answers of credentials that authenticated, keyed by the SHA-256 of the bearer (never the
 * plaintext), each until the credential stops being accepted (a JWT's `exp` plus tolerance;
 * local tokens until revoked). Indexed by token id (a revocation drops the entry) and by
 * principal (a rename updates it; ending a person's JWTs drops theirs). Past 10,000 entries it starts over, which only costs lookups.
 */
export class CredentialCache {
  readonly #entries = new Map<string, { auth: Authenticated; until: number }>();
  readonly #byTokenId = new Map<string, string>();
  readonly #byPrincipal = new Map<string, Set<string>>();

  get(key: string, nowMs: number): Authenticated | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until <= nowMs) {
      this.#delete(key);
      return undefined;
    }
    return entry.auth;
  }

  set(key: string, auth: Authenticated): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#clear();
    this.#entries.set(key, { auth, until: auth.acceptedUntil ?? Number.POSITIVE_INFINITY });
    if (auth.tokenId !== null) this.#byTokenId.set(auth.tokenId, key);
    let keys = this.#byPrincipal.get(auth.principal.principalId);
    if (keys === undefined) this.#byPrincipal.set(auth.principal.principalId, (keys = new Set()));
    keys.add(key);
  }

  dropTokens(tokenIds: readonly string[]): void {
    for (const tokenId of tokenIds) {
      const key = this.#byTokenId.get(tokenId);
      if (key !== undefined) this.#delete(key);
    }
  }

  /** Forgets every JWT answer of this principal (its JWTs issued before some time were revoked: each is checked again). */
  dropJwtsOf(principalId: string): void {
    for (const key of [...(this.#byPrincipal.get(principalId) ?? [])]) {
      if (this.#entries.get(key)?.auth.tokenId === null) this.#delete(key);
    }
  }

  /** Later answers for this principal carry its new displayName (or joinableBy). */
  updatePrincipal(principal: Principal): void {
    for (const key of this.#byPrincipal.get(principal.principalId) ?? []) {
      const entry = this.#entries.get(key);
      if (entry !== undefined) entry.auth = { ...entry.auth, principal };
    }
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    if (entry.auth.tokenId !== null) this.#byTokenId.delete(entry.auth.tokenId);
    const keys = this.#byPrincipal.get(entry.auth.principal.principalId);
    keys?.delete(key);
    if (keys?.size === 0) this.#byPrincipal.delete(entry.auth.principal.principalId);
  }

  #clear(): void {
    this.#entries.clear();
    this.#byTokenId.clear();
    this.#byPrincipal.clear();
  }
}
