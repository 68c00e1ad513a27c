import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwksCache,
  jwtVerify,
  type ExportedJWKSCache,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import {
  createOidcDiscovery,
  describeFetchError,
  holdOffAfterFailure,
  IdentityProviderUnreachable,
  type ProviderFetch,
} from './oidc-discovery.js';
import { OIDC_DEFAULTS, sameIssuer, type OidcOptions } from './oidc-options.js';

/** A verified access token's claims: `sub` and `exp` are always there. */
export type VerifiedClaims = JWTPayload & { sub: string; exp: number };

export type JwtCheck =
  | {
      ok: true;
      claims: VerifiedClaims;
      issuer: string /** When the server stops accepting it (ms): `exp` plus the clock tolerance. */;
      acceptedUntil: number;
    }
  /** `invalid`: the token is wrong (counts as a failed authentication); `unreachable`: the provider could not be asked. */
  | { ok: false; reason: 'invalid' | 'unreachable'; message: string };

/** Asymmetric algorithms only: a JWKS holds public keys, and `none` or an HMAC must never pass. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
/** Far above any real access token; a bearer this long is refused before it is parsed. */
export const MAX_JWT_LENGTH = 16 * 1024;

/**
 * Verifies access-token JWTs of one issuer against its JWKS: signature, `iss`, `aud`, `exp`
 * and `nbf` (with a clock tolerance), a `sub`, and `typ` where the header has one (`JWT` or
 * `at+jwt`). A token without `kid` is verified with the one key it could be signed with, or,
 * while the provider publishes several (a rotation), with each of them.
 *
 * Cheap refusals come first and touch no network: a token of another issuer, one already
 * expired, or one for another audience is answered without asking the provider. Then the
 * issuer's metadata is discovered (once; retried while it fails) and the key is taken from
 * jose's remote JWKS set, which caches the set for `jwksCacheMaxAgeMs` and refetches it for a
 * `kid` it does not know at most once per `jwksCooldownMs` (so a rotated key is picked up by
 * one refetch, and tokens with made-up kids cannot make the server hammer the provider).
 * A URL of the provider that failed is not asked again for `retryAfterFailureMs`, so a
 * provider that is down is not hammered either (see `holdOffAfterFailure`). When fetching the
 * JWKS again fails (the provider is down past the cache age), the last key set fetched is used
 * instead, for up to `jwksMaxStaleMs` after it was fetched (see `keysWithStaleFallback`).
 */
export function createJwtVerifier(options: OidcOptions, now: () => number = Date.now) {
  const tolerance = options.clockToleranceSeconds ?? OIDC_DEFAULTS.clockToleranceSeconds;
  const timeoutMs = options.fetchTimeoutMs ?? OIDC_DEFAULTS.fetchTimeoutMs;
  const fetchFrom = holdOffAfterFailure(options.retryAfterFailureMs ?? OIDC_DEFAULTS.retryAfterFailureMs, now);
  const discovery = createOidcDiscovery(options.issuer, timeoutMs, fetchFrom);
  let keys: KeySet | undefined;
  /** Set (not awaited) when the page asks for origins the metadata has not given yet. */
  let discovering: Promise<unknown> | undefined;

  const refuse = (message: string): JwtCheck => ({ ok: false, reason: 'invalid', message });
  const unreachable = (detail: string): JwtCheck => ({
    ok: false,
    reason: 'unreachable',
    message: `the identity provider ${options.issuer} could not be reached to check this token (${detail}); try again shortly`,
  });

  /** Refusals that need neither keys nor network. */
  const precheck = (token: string): JwtCheck | null => {
    if (token.length > MAX_JWT_LENGTH) return refuse(`the JWT is longer than ${MAX_JWT_LENGTH} characters`);
    let claims: JWTPayload;
    let typ: unknown;
    try {
      typ = decodeProtectedHeader(token).typ;
      claims = decodeJwt(token);
    } catch {
      return refuse('the bearer is not a well-formed JWT');
    }
    // RFC 8725 3.11: where the header says what the token is, it must say an access token (RFC 9068) or a plain JWT.
    if (typ !== undefined && (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase()))) {
      return refuse(`the JWT's typ ${JSON.stringify(typ)} is not an access token's (JWT or at+jwt)`);
    }
    if (typeof claims.iss !== 'string' || !sameIssuer(claims.iss, options.issuer)) {
      return refuse(
        `the JWT was issued by ${JSON.stringify(claims.iss ?? null)}, not by this server's identity provider ${options.issuer}`,
      );
    }
    if (typeof claims.exp !== 'number') return refuse('the JWT has no exp claim');
    if (claims.exp + tolerance <= now() / 1000) return refuse(`the JWT expired at ${isoOf(claims.exp)}; sign in again`);
    const audiences = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
    if (!audiences.includes(options.audience)) {
      return refuse(
        `the JWT is for ${JSON.stringify(claims.aud ?? null)}, not for this server's audience ${options.audience}`,
      );
    }
    // RFC 9068: a client-credentials token's subject is the client itself. It stands for no person.
    if (claims.gty === 'client-credentials' || (claims.sub !== undefined && claims.sub === claims.client_id)) {
      return refuse('the JWT was issued to a client, not to a person (bots sign in with bubble_agent_ tokens)');
    }
    return null;
  };

  return {
    /** Fetches the issuer's metadata now (a failure is left for the first token to retry). */
    async prefetch(): Promise<boolean> {
      return discovery.get().then(
        () => true,
        () => false,
      );
    },
    /**
     * The origins a browser fetches from to sign a person in with this issuer: the issuer's, and,
     * once the metadata is known, those of its token, userinfo and revocation endpoints. While the
     * metadata is not known (the provider was down at startup), asking starts fetching it (held
     * off after a failure like every request to the provider) and waits up to `waitMs` for it, so
     * the page served once the provider is back lets the browser reach its token endpoint.
     */
    async browserOrigins(waitMs = BROWSER_ORIGINS_WAIT_MS): Promise<string[]> {
      if (discovery.known() === undefined) {
        discovering ??= discovery.get().then(
          () => (discovering = undefined),
          () => (discovering = undefined),
        );
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([discovering, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
        clearTimeout(timer);
      }
      const document = discovery.known();
      const urls = [
        options.issuer,
        document?.token_endpoint,
        document?.userinfo_endpoint,
        document?.revocation_endpoint,
      ];
      return [
        ...new Set(
          urls.flatMap((url) => (url === undefined || URL.parse(url) === null ? [] : [URL.parse(url)!.origin])),
        ),
      ];
    },
    async verify(token: string): Promise<JwtCheck> {
      const early = precheck(token);
      if (early !== null) return early;
      let issuer: string;
      try {
        const document = await discovery.get();
        issuer = document.issuer;
        keys ??= keysWithStaleFallback(new URL(document.jwks_uri), options, timeoutMs, fetchFrom);
      } catch (error) {
        if (error instanceof IdentityProviderUnreachable) return unreachable(error.message);
        throw error;
      }
      const checks = {
        issuer,
        audience: options.audience,
        algorithms: ALGORITHMS,
        clockTolerance: tolerance,
        requiredClaims: ['sub', 'exp'],
        currentDate: new Date(now()),
      };
      const getKey = keys;
      const attempt = () =>
        jwtVerify(token, getKey, checks).catch((error: unknown) =>
          error instanceof errors.JWKSMultipleMatchingKeys
            ? verifyWithEach(token, error, checks)
            : Promise.reject(error),
        );
      try {
        const { payload } = await attempt().catch(async (error: unknown) => {
          // A token without kid never makes jose fetch a rotated key set: it is fetched again for one whose
          // signature no cached key verifies, at most once per cooldown like an unknown kid.
          if (!(error instanceof errors.JWSSignatureVerificationFailed) || safeKid(token) !== undefined) throw error;
          if (!(await getKey.reloadUnlessCoolingDown())) throw error;
          return attempt();
        });
        if (typeof payload.sub !== 'string' || payload.sub === '') return refuse('the JWT has no sub claim');
        const claims = payload as VerifiedClaims;
        return { ok: true, claims, issuer: payload.iss!, acceptedUntil: (claims.exp + tolerance) * 1000 };
      } catch (error) {
        return classify(error, token, refuse, unreachable);
      }
    },
  };
}

export type JwtVerifier = ReturnType<typeof createJwtVerifier>;

/** The `typ` values (compared in lower case) of a token that may be an access token. */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt']);

/** At most this many keys are tried for a token whose header does not say which (`kid`). */
const MAX_KEYS_TRIED = 8;

/**
 * A token without `kid` that more than one published key could have signed (a provider during
 * a key rotation publishes the old key and the new): verified with each in turn, the first that
 * verifies wins; if none does, the last key's refusal (a signature that does not verify).
 */
async function verifyWithEach(
  token: string,
  multiple: errors.JWKSMultipleMatchingKeys,
  checks: Parameters<typeof jwtVerify>[2],
): ReturnType<typeof jwtVerify> {
  let last: unknown = multiple;
  let tried = 0;
  for await (const key of multiple) {
    if (tried >= MAX_KEYS_TRIED) break;
    tried += 1;
    try {
      return await jwtVerify(token, key, checks);
    } catch (error) {
      last = error;
      // Only a signature that does not verify says another key may; a claim that fails fails for every key.
      if (!(error instanceof errors.JWSSignatureVerificationFailed)) throw error;
    }
  }
  throw last;
}

/** How long serving the web page waits for the provider's metadata when it is not known yet. */
export const BROWSER_ORIGINS_WAIT_MS = 1_000;

/** Whether a 200 body is a JSON Web Key Set (an object with an array of objects `keys`). */
const jwksProblem = (body: unknown): string | null => {
  const keys = typeof body === 'object' && body !== null ? (body as { keys?: unknown }).keys : undefined;
  return Array.isArray(keys) && keys.every((key) => typeof key === 'object' && key !== null)
    ? null
    : 'is not a JSON Web Key Set';
};

/** A failure to fetch the key set (rather than something wrong with the token): the provider could not be asked. */
const isFetchFailure = (error: unknown): boolean =>
  error instanceof IdentityProviderUnreachable ||
  error instanceof errors.JWKSTimeout ||
  error instanceof errors.JWKSInvalid ||
  error instanceof TypeError ||
  error instanceof SyntaxError ||
  (error instanceof errors.JOSEError && error.code === errors.JOSEError.code);

/**
 * jose's remote key set (cached for `jwksCacheMaxAgeMs`, refetched for an unknown kid at most
 * once per `jwksCooldownMs`), except that when fetching it fails, the last set it fetched is used
 * if that is at most `jwksMaxStaleMs` old: a provider that is down for a while does not log out
 * everyone whose token is signed with a key the server already has. A kid that set does not hold
 * still needs the provider, so that token is refused as unreachable (not as a wrong key).
 */
/** The key getter `jwtVerify` takes, and a way to fetch the set again outside jose's own triggers. */
type KeySet = JWTVerifyGetKey & {
  /** Fetches the key set again unless it was fetched within the cooldown; whether it did. */
  reloadUnlessCoolingDown(): Promise<boolean>;
};

function keysWithStaleFallback(url: URL, options: OidcOptions, timeoutMs: number, fetchFrom: ProviderFetch): KeySet {
  const maxStaleMs = options.jwksMaxStaleMs ?? OIDC_DEFAULTS.jwksMaxStaleMs;
  // jose writes every key set it fetches here, with the time (Date.now()) it fetched it.
  const lastGood: Partial<ExportedJWKSCache> = {};
  const remote = createRemoteJWKSet(url, {
    cooldownDuration: options.jwksCooldownMs ?? OIDC_DEFAULTS.jwksCooldownMs,
    cacheMaxAge: options.jwksCacheMaxAgeMs ?? OIDC_DEFAULTS.jwksCacheMaxAgeMs,
    timeoutDuration: timeoutMs,
    [jwksCache]: lastGood as Record<string, never>,
    [customFetch]: (href, init) => fetchFrom(href, init as RequestInit, jwksProblem),
  });
  let stale: { jwks: JSONWebKeySet; getKey: JWTVerifyGetKey } | undefined;
  const getKey: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (error) {
      const { jwks, uat } = lastGood;
      if (!isFetchFailure(error) || jwks === undefined || uat === undefined || Date.now() - uat > maxStaleMs)
        throw error;
      if (stale?.jwks !== jwks) stale = { jwks, getKey: createLocalJWKSet(jwks) };
      try {
        return await stale.getKey(header, token);
      } catch (fallbackError) {
        throw fallbackError instanceof errors.JWKSNoMatchingKey ? error : fallbackError;
      }
    }
  };
  return Object.assign(getKey, {
    async reloadUnlessCoolingDown(): Promise<boolean> {
      if (remote.coolingDown) return false;
      try {
        await remote.reload();
        return true;
      } catch {
        return false;
      }
    },
  });
}

const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** A jose failure in words: what is wrong with the token, or that the provider could not be asked. */
function classify(
  error: unknown,
  token: string,
  refuse: (m: string) => JwtCheck,
  unreachable: (d: string) => JwtCheck,
): JwtCheck {
  if (error instanceof errors.JWTExpired)
    return refuse(`the JWT expired at ${isoOf(Number(error.payload.exp))}; sign in again`);
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return refuse(`the JWT is not valid before ${isoOf(Number(error.payload.nbf))}`);
      case 'iss':
        return refuse("the JWT's issuer is not this server's identity provider");
      case 'aud':
        return refuse("the JWT's audience is not this server's");
      default:
        return refuse(`the JWT's ${error.claim} claim is not acceptable: ${error.reason}`);
    }
  }
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return refuse("the JWT's signature does not verify with the identity provider's key");
  if (error instanceof errors.JWKSNoMatchingKey) {
    const kid = safeKid(token);
    return refuse(
      `the JWT is signed with a key${kid === undefined ? '' : ` (kid ${JSON.stringify(kid)})`} that the identity provider does not publish`,
    );
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return refuse(`the JWT's algorithm is not one of ${ALGORITHMS.join(', ')}`);
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return refuse(`the JWT is not acceptable: ${error.message}`);
  }
  if (error instanceof errors.JOSENotSupported)
    return refuse(`the JWT uses something this server does not support: ${error.message}`);
  if (error instanceof IdentityProviderUnreachable) return unreachable(error.message);
  // Everything else comes from fetching the JWKS: a timeout, a refused connection, a non-200, a body that is no key set.
  if (error instanceof errors.JWKSTimeout) return unreachable('its JWKS did not answer in time');
  if (error instanceof errors.JOSEError || error instanceof TypeError || error instanceof SyntaxError) {
    return unreachable(`its JWKS could not be fetched: ${describeFetchError(error)}`);
  }
  throw error;
}

function safeKid(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).kid;
  } catch {
    return undefined;
  }
}
