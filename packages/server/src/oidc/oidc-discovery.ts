import { z } from 'zod';
import { isHttpOnLoopback, sameIssuer } from './oidc-options.js';

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

/** What is wrong with a 200 answer's JSON, in words (`…answered 200, but it <problem>`); null when it is what was asked for. */
export type BodyCheck = (body: unknown) => string | null;

/**
 * `fetch` for asking an identity provider, holding off after a failure: a URL whose last request
 * failed less than `holdMs` ago is not asked again until then, so requests with tokens the server
 * cannot check while the provider is down never turn into a stream of requests to it. A failure is
 * no answer, an answer other than 200, or, given `check`, a 200 whose body is not JSON or that
 * `check` finds wrong (which is then thrown as `IdentityProviderUnreachable`): a provider that
 * answers 200 with an error page is as unusable as one that is down.
 */
export function holdOffAfterFailure(holdMs: number, now: () => number = Date.now) {
  const failedAt = new Map<string, number>();
  return async (url: string, init: RequestInit, check?: BodyCheck): Promise<Response> => {
    const last = failedAt.get(url);
    if (last !== undefined && now() - last < holdMs) {
      throw new IdentityProviderUnreachable(
        `${url} failed ${now() - last} ms ago; it is asked again ${holdMs} ms after a failure`,
      );
    }
    try {
      const response = await fetch(url, init);
      if (response.status !== 200) {
        failedAt.set(url, now());
        return response;
      }
      if (check === undefined) {
        failedAt.delete(url);
        return response;
      }
      const text = await response.text();
      let problem: string | null;
      try {
        problem = check(JSON.parse(text));
      } catch {
        problem = 'is not JSON';
      }
      if (problem !== null) throw new IdentityProviderUnreachable(`${url} answered 200, but it ${problem}`);
      failedAt.delete(url);
      return new Response(text, {
        status: 200,
        headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' },
      });
    } catch (error) {
      failedAt.set(url, now());
      throw error;
    }
  };
}

export type ProviderFetch = (url: string, init: RequestInit, check?: BodyCheck) => Promise<Response>;

/**
 * Where the keys may come from: `jwks_uri` must be https, except for an issuer that is itself
 * http on a loopback address (a provider on this machine, as `serve` allows), whose JWKS may be
 * too. Keys fetched in the clear could be swapped by anyone on the path, and every token with them.
 */
export function jwksUriProblem(issuer: string, jwksUri: string): string | null {
  const jwks = URL.parse(jwksUri);
  if (jwks === null) return `names jwks_uri ${JSON.stringify(jwksUri)}, which is not a URL`;
  if (jwks.protocol === 'https:') return null;
  const from = URL.parse(issuer);
  if (from !== null && isHttpOnLoopback(from) && isHttpOnLoopback(jwks)) return null;
  return `names jwks_uri ${jwksUri}, which is not https (http only for an issuer that is itself http on a loopback address)`;
}

/** What is wrong with a discovery document for `issuer`; null when it is good. */
function discoveryProblem(issuer: string, body: unknown): string | null {
  const parsed = DiscoveryDocumentSchema.safeParse(body);
  if (!parsed.success) return 'is not OpenID provider metadata (it needs issuer and jwks_uri)';
  if (!sameIssuer(parsed.data.issuer, issuer))
    return `names the issuer ${parsed.data.issuer}, not the configured ${issuer}`;
  return jwksUriProblem(issuer, parsed.data.jwks_uri);
}

/**
 * The issuer's metadata from `<issuer>/.well-known/openid-configuration`, fetched on first use
 * and kept once it is good. Concurrent callers share one request; a failed one is not kept, so
 * the next caller asks again (at most one request is in flight at a time). A document that is
 * not metadata, names another issuer or an http `jwks_uri` (see `jwksUriProblem`) is a failure
 * like no answer, held off the same way.
 */
export function createOidcDiscovery(
  issuer: string,
  timeoutMs: number,
  fetchFrom: ProviderFetch = (url, init) => fetch(url, init),
) {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let known: DiscoveryDocument | undefined;
  let pending: Promise<DiscoveryDocument> | undefined;

  const fetchDocument = async (): Promise<DiscoveryDocument> => {
    let response: Response;
    try {
      response = await fetchFrom(
        url,
        { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) },
        (body) => discoveryProblem(issuer, body),
      );
    } catch (error) {
      if (error instanceof IdentityProviderUnreachable) throw error;
      throw new IdentityProviderUnreachable(`${url} could not be fetched (${describeFetchError(error)})`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new IdentityProviderUnreachable(`${url} answered ${response.status}`);
    }
    const body: unknown = await response.json().catch(() => undefined);
    const problem = body === undefined ? 'is not JSON' : discoveryProblem(issuer, body);
    if (problem !== null) throw new IdentityProviderUnreachable(`${url} answered 200, but it ${problem}`);
    return DiscoveryDocumentSchema.parse(body);
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
