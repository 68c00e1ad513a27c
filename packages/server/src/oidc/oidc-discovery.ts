import { z } from 'zod';
import { sameIssuer } from './oidc-options.js';

/** The identity provider could not be asked (down, slow, or answering something that is not its metadata). */
export class IdentityProviderUnreachable extends Error {
  override readonly name = 'IdentityProviderUnreachable';
}

const DiscoveryDocumentSchema = z.looseObject({
  issuer: z.string().min(1),
  jwks_uri: z.url({ protocol: /^https?$/ }),
  token_endpoint: z.string().optional(),
  userinfo_endpoint: z.string().optional(),
  revocation_endpoint: z.string().optional(),
});
export type DiscoveryDocument = z.infer<typeof DiscoveryDocumentSchema>;

/**
 * The issuer's metadata from `<issuer>/.well-known/openid-configuration`, fetched on first use
 * and kept once it is good. Concurrent callers share one request; a failed one is not kept, so
 * the next caller asks again (at most one request is in flight at a time).
 */
/**
 * `fetch` for asking an identity provider, holding off after a failure: a URL whose last request
 * failed (no answer, or not 200) less than `holdMs` ago is not asked again until then, so
 * requests with tokens the server cannot check while the provider is down never turn into a
 * stream of requests to it.
 */
export function holdOffAfterFailure(holdMs: number, now: () => number = Date.now) {
  const failedAt = new Map<string, number>();
  return async (url: string, init: RequestInit): Promise<Response> => {
    const last = failedAt.get(url);
    if (last !== undefined && now() - last < holdMs) {
      throw new IdentityProviderUnreachable(`${url} failed ${now() - last} ms ago; it is asked again ${holdMs} ms after a failure`);
    }
    try {
      const response = await fetch(url, init);
      if (response.status === 200) failedAt.delete(url);
      else failedAt.set(url, now());
      return response;
    } catch (error) {
      failedAt.set(url, now());
      throw error;
    }
  };
}

export type ProviderFetch = ReturnType<typeof holdOffAfterFailure>;

export function createOidcDiscovery(issuer: string, timeoutMs: number, fetchFrom: ProviderFetch = (url, init) => fetch(url, init)) {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let known: DiscoveryDocument | undefined;
  let pending: Promise<DiscoveryDocument> | undefined;

  const fetchDocument = async (): Promise<DiscoveryDocument> => {
    let response: Response;
    try {
      response = await fetchFrom(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      if (error instanceof IdentityProviderUnreachable) throw error;
      throw new IdentityProviderUnreachable(`${url} could not be fetched (${describeFetchError(error)})`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new IdentityProviderUnreachable(`${url} answered ${response.status}`);
    }
    const parsed = DiscoveryDocumentSchema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw new IdentityProviderUnreachable(`${url} is not OpenID provider metadata (it needs issuer and jwks_uri)`);
    if (!sameIssuer(parsed.data.issuer, issuer)) {
      throw new IdentityProviderUnreachable(`${url} names the issuer ${parsed.data.issuer}, not the configured ${issuer}`);
    }
    return parsed.data;
  };

  return {
    /** The metadata, if it has been fetched. */
    known: (): DiscoveryDocument | undefined => known,
    get(): Promise<DiscoveryDocument> {
      if (known !== undefined) return Promise.resolve(known);
      pending ??= fetchDocument().then(
        (document) => {
          known = document;
          pending = undefined;
          return document;
        },
        (error: unknown) => {
          pending = undefined;
          throw error;
        },
      );
      return pending;
    },
  };
}

export function describeFetchError(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  const cause = error instanceof Error ? (error.cause as NodeJS.ErrnoException | undefined) : undefined;
  return cause?.code ?? (error instanceof Error ? error.message : String(error));
}
