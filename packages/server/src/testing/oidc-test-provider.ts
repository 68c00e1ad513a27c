/// <reference path="./oidc-provider-module.d.ts" />
/**
 * A real OpenID provider for tests: `oidc-provider` (panva's certified
 * implementation) on a loopback port, issuing RFC 9068 JWT access tokens for
 * one API audience, with its development login page (any login, any password).
 *
 * Tests sign people in through the real Authorization Code + PKCE flow over
 * HTTP (`login`), or a browser does it through the same pages. Beside that a
 * test can rotate the signing key, take the whole provider (or one endpoint)
 * down and up again, and sign tokens the provider would not issue (expired,
 * not yet valid, another audience, a foreign key) with its real keys.
 *
 * Exported as `@bubble/server/testing/oidc`; `oidc-provider` is a
 * devDependency of the server, so only tests load this module.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider, { errors, type ProviderContext } from 'oidc-provider';

/** Profile claims of one account, as the provider releases them (and puts in access tokens, unless turned off). */
export interface OidcTestAccount {
  name?: string;
  preferred_username?: string;
  nickname?: string;
  email?: string;
}

export interface OidcTestClient {
  clientId: string;
  redirectUris: string[];
  /** Origins allowed to call the token endpoint from a browser; default the redirect URIs' origins. */
  postLogoutRedirectUris?: string[];
}

export interface OidcTestProviderOptions {
  /** The API the access tokens are for (`aud`). Default `https://bubble.test/api`. */
  audience?: string;
  /** The public client (no secret, PKCE) that `login` uses. Default `bubble-web`. */
  clientId?: string;
  /** Where the code is sent; `login` never follows it, so nothing needs to listen. Default `http://127.0.0.1/callback`. */
  redirectUri?: string;
  /** More public clients, for example a browser test's web UI with its own redirect URI. */
  clients?: OidcTestClient[];
  /** Accounts by login (the login becomes `sub`); a login not listed signs in with no profile claims. */
  accounts?: Record<string, OidcTestAccount>;
  /** Lifetime of access tokens. Default 3600 s. */
  accessTokenTtlSeconds?: number;
  /** Whether access tokens carry the account's profile claims (as an Auth0 Action can add them). Default true. */
  profileClaimsInAccessToken?: boolean;
}

export interface OidcTokens {
  accessToken: string;
  idToken: string | undefined;
  refreshToken: string | undefined;
  expiresIn: number;
}

export interface OidcTestProvider {
  /** `http://127.0.0.1:PORT` (no trailing slash), the same across `stop`/`start` and key rotation. */
  readonly issuer: string;
  readonly audience: string;
  readonly clientId: string;
  readonly redirectUri: string;
  /** The kid access tokens are signed with now. */
  readonly currentKid: string;
  /** How many requests a path (`/jwks`, `/.well-known/openid-configuration`, `/token`, …) has had. */
  requestCount(path: string): number;
  /** Signs `login` in through the login and consent pages (Authorization Code + PKCE) and redeems the code. */
  login(login: string): Promise<OidcTokens>;
  /** Sets (or replaces) an account's profile claims; later tokens carry them. */
  setAccount(login: string, claims: OidcTestAccount): void;
  /** Lifetime of access tokens issued from now on. */
  setAccessTokenTtl(seconds: number): void;
  /**
   * Signs an access token with the provider's current key and kid, the way the provider does
   * (`typ: at+jwt`, its issuer and audience, a lifetime of `accessTokenTtlSeconds`); every claim
   * can be overridden (`exp`, `nbf`, `iss`, `aud`…), and `undefined` removes one; so can the
   * header's `kid` and `typ`, which `null` leaves out.
   */
  signAccessToken(claims: JWTPayload & { sub: string }, header?: SignedHeader): Promise<string>;
  /** The same, signed with a key the provider never published; the header names `kid` (default: the current, real kid). */
  signWithForeignKey(claims: JWTPayload & { sub: string }, kid?: string): Promise<string>;
  /** A new signing key: published from now on beside the old ones, and used for every token issued after. */
  rotateKey(): Promise<string>;
  /** Makes one path answer 503 (true) or work again (false), for example `/jwks`. */
  setPathDown(path: string, down: boolean): void;
  /** Stops listening and drops every connection: the provider is unreachable. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Header fields a test may change (`null`: left out). */
export interface SignedHeader {
  kid?: string | null;
  typ?: string | null;
}

const ALG = 'RS256';
const SCOPE = 'openid profile email offline_access';

interface SigningKey {
  kid: string;
  privateJwk: JWK;
}

async function newSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair(ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = `k-${randomBytes(6).toString('hex')}`;
  return { kid, privateJwk: { ...jwk, kid, alg: ALG, use: 'sig' } };
}

const PROFILE_CLAIMS = ['name', 'preferred_username', 'nickname', 'email'] as const;

/** Starts a real OpenID provider on 127.0.0.1 and an ephemeral port. */
export async function startOidcTestProvider(options: OidcTestProviderOptions = {}): Promise<OidcTestProvider> {
  const audience = options.audience ?? 'https://bubble.test/api';
  const clientId = options.clientId ?? 'bubble-web';
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1/callback';
  const accounts = new Map<string, OidcTestAccount>(Object.entries(options.accounts ?? {}));
  const profileInToken = options.profileClaimsInAccessToken ?? true;
  let ttlSeconds = options.accessTokenTtlSeconds ?? 3600;
  let keys: SigningKey[] = [await newSigningKey()];
  let foreignKey: SigningKey | undefined;
  const counts = new Map<string, number>();
  const downPaths = new Set<string>();
  const cookieKeys = [randomBytes(32).toString('base64url')];

  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const sockets = new Set<Socket>();
  const http: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (downPaths.has(path)) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down for a test');
      return;
    }
    handler(req, res);
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (http.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  const clients = [{ clientId, redirectUris: [redirectUri] }, ...(options.clients ?? [])].map((client) => ({
    client_id: client.clientId,
    token_endpoint_auth_method: 'none',
    application_type: 'web',
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: 'postLogoutRedirectUris' in client ? (client.postLogoutRedirectUris ?? []) : [],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  }));

  const resourceServer = () => ({
    scope: 'openid profile email',
    audience,
    accessTokenFormat: 'jwt',
    accessTokenTTL: ttlSeconds,
    jwt: { sign: { alg: ALG, kid: keys[0]!.kid } },
  });

  // The in-memory adapter's storage belongs to the module, so a new Provider over new keys keeps every session and grant.
  const build = (): Provider => {
    const provider = new Provider(issuer, {
      clients,
      jwks: { keys: keys.map((k) => k.privateJwk) },
      cookies: { keys: cookieKeys },
      pkce: { required: () => true },
      claims: { openid: ['sub'], profile: ['name', 'nickname', 'preferred_username'], email: ['email'] },
      findAccount: (_ctx: unknown, sub: string) => ({
        accountId: sub,
        claims: async () => ({ sub, ...accounts.get(sub) }),
      }),
      // Auth0-style clients name the API with `audience`; RFC 8707 clients with `resource`. Either way, the one API.
      extraParams: ['audience'],
      features: {
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => audience,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx: ProviderContext, indicator: string) => {
            if (indicator !== audience) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
            return resourceServer();
          },
        },
        rpInitiatedLogout: { enabled: true },
      },
      extraTokenClaims: async (_ctx: unknown, token: { accountId?: string }) => {
        if (!profileInToken || token.accountId === undefined) return undefined;
        const account = accounts.get(token.accountId) ?? {};
        return Object.fromEntries(PROFILE_CLAIMS.filter((c) => account[c] !== undefined).map((c) => [c, account[c]]));
      },
      issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
        client.grantTypeAllowed('refresh_token'),
      ttl: {
        AccessToken: () => ttlSeconds,
        AuthorizationCode: 60,
        IdToken: 3600,
        RefreshToken: 24 * 3600,
        Interaction: 600,
        Session: 24 * 3600,
        Grant: 24 * 3600,
      },
      renderError: async (ctx: { type: string; body: unknown }, out: Record<string, unknown>) => {
        ctx.type = 'json';
        ctx.body = out;
      },
    });
    return provider;
  };
  const use = (build: () => Provider): void => {
    // The provider warns, on every construction, that it keeps its state in memory and serves its development
    // login pages: both are what a test provider is for, so those two warnings are dropped (any other passes).
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && /in-memory adapter|devInteractions/.test(args[0])) return;
      warn(...args);
    };
    try {
      handler = build().callback();
    } finally {
      console.warn = warn;
    }
  };
  use(build);

  const stop = async (): Promise<void> => {
    if (!http.listening) return;
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };

  const sign = async (
    key: SigningKey,
    claims: JWTPayload & { sub: string },
    kid: string,
    header: SignedHeader = {},
  ): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      iss: issuer,
      aud: audience,
      iat: now,
      exp: now + ttlSeconds,
      jti: randomBytes(12).toString('base64url'),
      client_id: clientId,
      scope: 'openid profile email',
      ...claims,
    };
    for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
    return new SignJWT(payload)
      .setProtectedHeader({
        alg: ALG,
        ...(header.kid === null ? {} : { kid: header.kid ?? kid }),
        ...(header.typ === null ? {} : { typ: header.typ ?? 'at+jwt' }),
      })
      .sign(await importJWK(key.privateJwk, ALG));
  };

  return {
    issuer,
    audience,
    clientId,
    redirectUri,
    get currentKid() {
      return keys[0]!.kid;
    },
    requestCount: (path) => counts.get(path) ?? 0,
    login: (login) => runCodeFlow({ issuer, clientId, redirectUri, audience }, login),
    setAccount(login, claims) {
      accounts.set(login, { ...claims });
    },
    setAccessTokenTtl(seconds) {
      ttlSeconds = seconds;
    },
    signAccessToken: (claims, header) => sign(keys[0]!, claims, keys[0]!.kid, header),
    async signWithForeignKey(claims, kid) {
      foreignKey ??= await newSigningKey();
      return sign(foreignKey, claims, kid ?? keys[0]!.kid);
    },
    async rotateKey() {
      keys = [await newSigningKey(), ...keys];
      use(build);
      return keys[0]!.kid;
    },
    setPathDown(path, down) {
      if (down) downPaths.add(path);
      else downPaths.delete(path);
    },
    stop,
    async start() {
      if (!http.listening) await listen(port);
    },
    close: stop,
  };
}

/** A cookie jar for one browser session: every cookie is sent to every path (the flow visits each once). */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0]!;
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

const base64url = (bytes: Buffer): string => bytes.toString('base64url');

/** Authorization Code + PKCE through the provider's own pages, as a browser would go through them. */
async function runCodeFlow(
  provider: { issuer: string; clientId: string; redirectUri: string; audience: string },
  login: string,
): Promise<OidcTokens> {
  const jar = new CookieJar();
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  const state = base64url(randomBytes(12));
  const authorize = new URL(`${provider.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: provider.redirectUri,
    response_type: 'code',
    scope: SCOPE,
    prompt: 'consent',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    audience: provider.audience,
  }).toString();

  const go = async (url: URL, form?: Record<string, string>): Promise<Response> => {
    const response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
    });
    jar.take(response);
    return response;
  };

  let url = authorize;
  let response = await go(url);
  for (let step = 0; step < 20; step += 1) {
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location')!, url);
      await response.body?.cancel();
      if (next.href.startsWith(provider.redirectUri)) {
        const error = next.searchParams.get('error');
        if (error !== null)
          throw new Error(
            `the provider refused the sign-in: ${error} ${next.searchParams.get('error_description') ?? ''}`,
          );
        if (next.searchParams.get('state') !== state) throw new Error('the provider answered with another state');
        return redeemCode(provider, next.searchParams.get('code')!, verifier);
      }
      url = next;
      response = await go(url);
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`the provider answered ${response.status}: ${html.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
    if (action === undefined || prompt === undefined) throw new Error(`no sign-in form on ${url.href}`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    response = await go(url, prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
  }
  throw new Error('the sign-in did not end in a redirect to the client');
}

async function redeemCode(
  provider: { issuer: string; clientId: string; redirectUri: string },
  code: string,
  verifier: string,
): Promise<OidcTokens> {
  const response = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: provider.redirectUri,
      client_id: provider.clientId,
      code_verifier: verifier,
    }).toString(),
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200)
    throw new Error(`the token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
  return {
    accessToken: body.access_token as string,
    idToken: body.id_token as string | undefined,
    refreshToken: body.refresh_token as string | undefined,
    expiresIn: body.expires_in as number,
  };
}
