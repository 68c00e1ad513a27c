import { describe, expect, it } from 'vitest';
import { SessionEnded } from './oidc-credentials';
import { createOidcFlow } from './oidc-flow';
import type { OidcSession } from './oidc-session';

const ISSUER = 'https://idp.example';
const config = { issuer: ISSUER, clientId: 'spa', audience: 'api' };
const session: OidcSession = {
  issuer: ISSUER,
  clientId: 'spa',
  accessToken: 'at',
  receivedAt: 0,
  expiresAt: 60_000,
  refreshToken: 'rt',
  idToken: 'idt',
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A provider played by `fetch`: discovery answers, and the token endpoint answers `token`. */
function provider(
  token: (signal: AbortSignal | undefined) => Promise<Response> | Response,
  discovery?: (signal: AbortSignal | undefined) => Promise<Response>,
) {
  const signals: (AbortSignal | undefined)[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    const signal = init?.signal ?? undefined;
    signals.push(signal);
    if (url === `${ISSUER}/.well-known/openid-configuration`) {
      if (discovery) return discovery(signal);
      return json(200, {
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/auth`,
        token_endpoint: `${ISSUER}/token`,
        revocation_endpoint: `${ISSUER}/revoke`,
        end_session_endpoint: `${ISSUER}/session/end`,
      });
    }
    if (url === `${ISSUER}/token`) return token(signal);
    return json(404, {});
  }) as typeof globalThis.fetch;
  return { fetch, signals };
}

/** Never answers; rejects once `signal` aborts, as fetch does. */
const hang = (signal: AbortSignal | undefined) =>
  new Promise<Response>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));

async function refreshWith(answer: () => Promise<Response> | Response): Promise<unknown> {
  const { fetch } = provider(answer);
  const flow = await createOidcFlow(config, { origin: 'http://app.test', fetch });
  return flow.refresh(session).then(
    (s) => s,
    (error: unknown) => error,
  );
}

describe('refresh: which failures end the session', () => {
  it('answers the new session', async () => {
    const next = (await refreshWith(() =>
      json(200, { access_token: 'at2', token_type: 'bearer', expires_in: 60, refresh_token: 'rt2' }),
    )) as OidcSession;
    expect(next).toMatchObject({ accessToken: 'at2', refreshToken: 'rt2' });
  });

  it.each([
    ['invalid_grant (400)', 400, 'invalid_grant'],
    ['invalid_client (401)', 401, 'invalid_client'],
    ['unauthorized_client (400)', 400, 'unauthorized_client'],
  ])('ends it on %s', async (_name, status, error) => {
    const outcome = await refreshWith(() => json(status, { error }));
    expect(outcome).toBeInstanceOf(SessionEnded);
  });

  it.each([
    ['a 503 with an OAuth error', () => json(503, { error: 'temporarily_unavailable' })],
    ['a 400 temporarily_unavailable', () => json(400, { error: 'temporarily_unavailable' })],
    ['a 500 server_error', () => json(500, { error: 'server_error' })],
    ['a 429 without an OAuth body', () => new Response('slow down', { status: 429 })],
    [
      'a 502 HTML page',
      () => new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
    ],
    ['no answer at all', () => Promise.reject(new TypeError('Failed to fetch'))],
  ])('keeps it on %s (tried again later)', async (_name, answer) => {
    const outcome = await refreshWith(answer);
    expect(outcome).toBeInstanceOf(Error);
    expect(outcome).not.toBeInstanceOf(SessionEnded);
  });
});

describe('requests to the provider are bounded in time', () => {
  it('gives up on a token endpoint that does not answer, as a passing failure', async () => {
    const { fetch, signals } = provider(hang);
    const flow = await createOidcFlow(config, { origin: 'http://app.test', fetch, timeoutMs: 50 });
    const started = Date.now();
    const outcome = await flow.refresh(session).catch((error: unknown) => error);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome).toBeInstanceOf(Error);
    expect(outcome).not.toBeInstanceOf(SessionEnded);
    expect(signals.every((s) => s instanceof AbortSignal)).toBe(true);
  });

  it('gives up on discovery that does not answer', async () => {
    const { fetch } = provider(() => json(500, {}), hang);
    const started = Date.now();
    await expect(createOidcFlow(config, { origin: 'http://app.test', fetch, timeoutMs: 50 })).rejects.toBeDefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('sends discovery with a timeout signal by default (10 s)', async () => {
    const { fetch, signals } = provider(() => json(500, {}));
    await createOidcFlow(config, { origin: 'http://app.test', fetch });
    // AbortSignal.timeout signals: one per request, none aborted yet.
    expect(signals).toHaveLength(1);
    expect(signals[0]).toBeInstanceOf(AbortSignal);
    expect(signals[0]!.aborted).toBe(false);
  });
});
