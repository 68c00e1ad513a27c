import type { OidcInfo } from '@bubble/protocol';
import * as oauth from 'oauth4webapi';
import { sessionFromAnswer, type OidcSession } from './oidc-session';
import { CALLBACK_PATH, type PendingSignIn } from './pending-sign-in';
import { SessionEnded } from './oidc-credentials';

/**
 * Authorization Code with PKCE against the server's identity provider (`auth.oidc` of
 * `/v1/info`), with `oauth4webapi`: discovery, the redirect out (S256 challenge, `state`,
 * `nonce`, `audience`), the callback (state checked, code traded, ID token's `nonce`, `iss`,
 * `aud` and `exp` checked), refresh, and sign-out at the provider.
 *
 * The scope asks for `offline_access`: a refresh token renews the access token in the
 * background (Auth0 issues one when the API allows offline access; with rotation on, each
 * refresh answers a new one). Without a refresh token the session ends when the access token
 * does, and the person signs in again.
 */
export interface OidcFlow {
  readonly config: OidcInfo;
  /** Where the provider signs people out, if it says so in its discovery document. */
  readonly signsOutAtProvider: boolean;
  /** The provider's authorization URL for a new sign-in, and what to remember until it comes back. */
  start(returnTo: string): Promise<{ url: string; pending: PendingSignIn }>;
  /** Checks the provider's answer at `callbackUrl` against `pending` and trades the code for tokens. */
  finish(callbackUrl: URL, pending: PendingSignIn): Promise<OidcSession>;
  /** A new access token from the refresh token; throws `SessionEnded` when the provider refuses it. */
  refresh(session: OidcSession): Promise<OidcSession>;
  /** Revokes the refresh token (where the provider can), then answers the provider's sign-out URL, or null. */
  signOut(session: OidcSession, returnTo: string): Promise<string | null>;
  /** Revokes the refresh token only (best effort, brief): a session this tab drops without signing out at the provider. */
  revoke(session: OidcSession): Promise<void>;
}

export const OIDC_SCOPE = 'openid profile email offline_access';

/** Plain http is allowed only for a provider on this machine (a local test provider). */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

/** How long discovery, the code exchange and a refresh may take before they count as failed (and are retried). */
export const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * Whether a failed refresh is the provider's definite refusal of the refresh token (sign in
 * again): `invalid_grant` (revoked, expired, rotated away), or another OAuth error answered with
 * 400/401 (this client is not allowed that grant). Anything else (no answer, a timeout, 5xx, 429,
 * `temporarily_unavailable`, an answer that is not OAuth JSON) may pass, and is retried.
 */
export function isDefiniteRefusal(error: unknown): boolean {
  if (!(error instanceof oauth.ResponseBodyError)) return false;
  if (error.error === 'invalid_grant') return true;
  if (error.error === 'temporarily_unavailable' || error.error === 'server_error' || error.error === 'slow_down')
    return false;
  return error.status === 400 || error.status === 401;
}

export async function createOidcFlow(
  config: OidcInfo,
  options: { origin: string; now?: () => number; fetch?: typeof fetch; timeoutMs?: number },
): Promise<OidcFlow> {
  const issuer = new URL(config.issuer);
  const insecure = isLoopbackHttp(issuer);
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const custom = options.fetch === undefined ? {} : { [oauth.customFetch]: options.fetch };
  // Every request to the provider is bounded: one that hangs must not hold a sign-in or a renewal for ever.
  const http = { [oauth.allowInsecureRequests]: insecure, ...custom, signal: () => AbortSignal.timeout(timeoutMs) };
  const brief = { [oauth.allowInsecureRequests]: insecure, ...custom };
  const now = options.now ?? Date.now;
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }),
  );
  const client: oauth.Client = { client_id: config.clientId };
  const auth = oauth.None();
  const redirectUri = `${options.origin}${CALLBACK_PATH}`;

  const revoke = async (session: OidcSession): Promise<void> => {
    if (session.refreshToken === undefined || as.revocation_endpoint === undefined) return;
    // Best effort and brief: a provider that does not answer does not keep the person here.
    await oauth
      .revocationRequest(as, client, auth, session.refreshToken, {
        ...brief,
        signal: AbortSignal.timeout(3_000),
        additionalParameters: { token_type_hint: 'refresh_token' },
      })
      .then((response) => oauth.processRevocationResponse(response))
      .catch(() => undefined);
  };

  const refreshOnce = async (session: OidcSession): Promise<OidcSession> => {
    if (session.refreshToken === undefined) throw new SessionEnded('no refresh token');
    let answer: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.refreshTokenGrantRequest(as, client, auth, session.refreshToken, http);
      answer = await oauth.processRefreshTokenResponse(as, client, response);
    } catch (error) {
      // The provider refused the refresh token (revoked, expired, rotated away): sign in again.
      if (isDefiniteRefusal(error)) throw new SessionEnded((error as oauth.ResponseBodyError).error);
      throw error;
    }
    return sessionFromAnswer(session, answer, now());
  };

  return {
    config,
    signsOutAtProvider: as.end_session_endpoint !== undefined || isAuth0(issuer),
    async start(returnTo) {
      const codeVerifier = oauth.generateRandomCodeVerifier();
      const pending: PendingSignIn = {
        issuer: config.issuer,
        clientId: config.clientId,
        state: oauth.generateRandomState(),
        nonce: oauth.generateRandomNonce(),
        codeVerifier,
        returnTo,
        startedAt: now(),
      };
      const url = new URL(as.authorization_endpoint!);
      const params: Record<string, string> = {
        client_id: config.clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: OIDC_SCOPE,
        code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
        ...audienceParams(config),
      };
      for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
      return { url: url.toString(), pending };
    },
    async finish(callbackUrl, pending) {
      if (pending.issuer !== config.issuer || pending.clientId !== config.clientId)
        throw new Error('this sign-in was started for another identity provider');
      const params = oauth.validateAuthResponse(as, client, callbackUrl, pending.state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        redirectUri,
        pending.codeVerifier,
        http,
      );
      const answer = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: pending.nonce,
        requireIdToken: true,
      });
      return sessionFromAnswer(
        {
          issuer: config.issuer,
          clientId: config.clientId,
          endSessionEndpoint: as.end_session_endpoint,
        },
        answer,
        now(),
      );
    },
    refresh: refreshOnce,
    revoke,
    async signOut(session, returnTo) {
      await revoke(session);
      return providerSignOutUrl(
        { issuer: config.issuer, clientId: config.clientId, endSessionEndpoint: as.end_session_endpoint },
        session,
        returnTo,
      );
    },
  };
}

/**
 * Where the person signs out at the provider: its discovered `end_session_endpoint` (kept in the
 * session too, so sign-out still gets there when discovery fails at that moment), or Auth0's
 * `/v2/logout`; null when the provider has neither.
 */
export function providerSignOutUrl(
  provider: { issuer: string; clientId: string; endSessionEndpoint: string | undefined },
  session: OidcSession,
  returnTo: string,
): string | null {
  const endSession = provider.endSessionEndpoint ?? session.endSessionEndpoint;
  if (endSession !== undefined) {
    const url = new URL(endSession);
    url.searchParams.set('client_id', provider.clientId);
    url.searchParams.set('post_logout_redirect_uri', returnTo);
    if (session.idToken !== undefined) url.searchParams.set('id_token_hint', session.idToken);
    return url.toString();
  }
  // Auth0 tenants without RP-initiated logout discovery still sign out at /v2/logout.
  const issuer = new URL(provider.issuer);
  if (isAuth0(issuer)) {
    const url = new URL('/v2/logout', issuer);
    url.searchParams.set('client_id', provider.clientId);
    url.searchParams.set('returnTo', returnTo);
    return url.toString();
  }
  return null;
}

/** Auth0 issues a JWT access token only for an API named by `audience`. */
function audienceParams(config: OidcInfo): Record<string, string> {
  return config.audience ? { audience: config.audience } : {};
}

function isAuth0(issuer: URL): boolean {
  return /\.auth0\.com$/.test(issuer.hostname);
}
