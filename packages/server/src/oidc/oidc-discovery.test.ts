import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createBubbleServer, type BubbleServer } from '../create-bubble-server.js';
import { createJwtVerifier } from './jwt-verifier.js';
import {
  createOidcDiscovery,
  holdOffAfterFailure,
  IdentityProviderUnreachable,
  jwksUriProblem,
} from './oidc-discovery.js';

const DISCOVERY = '/.well-known/openid-configuration';

/** An issuer on a loopback port whose answers a test sets path by path (status and body), counting requests. */
interface FakeIssuer {
  readonly issuer: string;
  answer(path: string, status: number, body: unknown): void;
  count(path: string): number;
  close(): Promise<void>;
}

async function startFakeIssuer(): Promise<FakeIssuer> {
  const answers = new Map<string, { status: number; body: string }>();
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const answer = answers.get(path) ?? { status: 404, body: 'no such page' };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    answer: (path, status, body) =>
      answers.set(path, { status, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    count: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const metadata = (issuer: string, extra: Record<string, unknown> = {}) => ({
  issuer,
  jwks_uri: `${issuer}/jwks`,
  ...extra,
});

/** A fetch that answers every URL with this JSON (for issuers no test can serve, such as https ones). */
const answering = (body: unknown) => async () =>
  new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

let fake: FakeIssuer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('where the keys may come from', () => {
  it.each<[string, string, boolean]>([
    ['https://idp.example/', 'https://idp.example/.well-known/jwks.json', true],
    ['https://idp.example/', 'https://keys.example/jwks', true],
    ['https://idp.example/', 'http://idp.example/.well-known/jwks.json', false],
    ['https://idp.example/', 'http://127.0.0.1:8080/jwks', false],
    ['http://127.0.0.1:9000', 'http://127.0.0.1:9000/jwks', true],
    ['http://localhost:9000', 'http://localhost:9000/jwks', true],
    ['http://127.0.0.1:9000', 'http://keys.example/jwks', false],
    ['https://idp.example/', 'ftp://idp.example/jwks', false],
  ])('issuer %s, jwks_uri %s: allowed %s', (issuer, jwksUri, allowed) => {
    expect(jwksUriProblem(issuer, jwksUri) === null).toBe(allowed);
  });

  it('refuses metadata of an https issuer whose jwks_uri is plain http', async () => {
    const issuer = 'https://idp.example/';
    const plain = createOidcDiscovery(
      issuer,
      1_000,
      answering({ issuer, jwks_uri: 'http://idp.example/.well-known/jwks.json' }),
    );
    const error = await plain.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdentityProviderUnreachable);
    expect((error as Error).message).toContain('not https');
    expect(plain.known()).toBeUndefined();

    const secure = createOidcDiscovery(
      issuer,
      1_000,
      answering({ issuer, jwks_uri: 'https://idp.example/.well-known/jwks.json' }),
    );
    expect((await secure.get()).jwks_uri).toBe('https://idp.example/.well-known/jwks.json');
  });

  it('takes an http jwks_uri from an issuer that is itself http on a loopback address', async () => {
    fake = await startFakeIssuer();
    fake.answer(DISCOVERY, 200, metadata(fake.issuer));
    expect((await createOidcDiscovery(fake.issuer, 1_000).get()).jwks_uri).toBe(`${fake.issuer}/jwks`);
  });
});

describe('holding off after a failure', () => {
  it.each<[string, unknown]>([
    ['a body that is not JSON', '<html>we are down</html>'],
    ['JSON that is not metadata', { error: 'maintenance' }],
    ['metadata of another issuer', { issuer: 'https://other.example/', jwks_uri: 'https://other.example/jwks' }],
  ])('treats a 200 with %s as a failure: not asked again within the hold-off', async (_name, body) => {
    fake = await startFakeIssuer();
    fake.answer(DISCOVERY, 200, body);
    const discovery = createOidcDiscovery(fake.issuer, 1_000, holdOffAfterFailure(60_000));
    for (let i = 0; i < 3; i += 1) await expect(discovery.get()).rejects.toBeInstanceOf(IdentityProviderUnreachable);
    expect(fake.count(DISCOVERY)).toBe(1);
  });

  it('treats a JWKS answering 200 with something that is no key set as a failure too', async () => {
    fake = await startFakeIssuer();
    fake.answer(DISCOVERY, 200, metadata(fake.issuer));
    fake.answer('/jwks', 200, { hello: 'world' });
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({
      iss: fake.issuer,
      aud: 'api',
      sub: 'alice',
      exp: Math.floor(Date.now() / 1000) + 600,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(privateKey);
    const verifier = createJwtVerifier({
      issuer: fake.issuer,
      audience: 'api',
      clientId: 'web',
      retryAfterFailureMs: 60_000,
      jwksCooldownMs: 0,
    });
    for (let i = 0; i < 3; i += 1)
      expect(await verifier.verify(token)).toMatchObject({ ok: false, reason: 'unreachable' });
    expect(fake.count('/jwks')).toBe(1);
    expect(fake.count(DISCOVERY)).toBe(1);
  });

  it('verifies once the JWKS answers a key set', async () => {
    fake = await startFakeIssuer();
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    fake.answer(DISCOVERY, 200, metadata(fake.issuer));
    fake.answer('/jwks', 200, { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
    const token = await new SignJWT({
      iss: fake.issuer,
      aud: 'api',
      sub: 'alice',
      exp: Math.floor(Date.now() / 1000) + 600,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(privateKey);
    const verifier = createJwtVerifier({ issuer: fake.issuer, audience: 'api', clientId: 'web' });
    expect(await verifier.verify(token)).toMatchObject({ ok: true, claims: { sub: 'alice' } });
  });
});

describe("the web page's CSP when the provider was down at startup", () => {
  let web: BubbleServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await web?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    web = undefined;
    dir = undefined;
  });

  it('fetches the metadata again when the page is served, and serves the token endpoint in connect-src once known', async () => {
    fake = await startFakeIssuer();
    fake.answer(DISCOVERY, 503, 'starting up');
    dir = await mkdtemp(join(tmpdir(), 'bubble-csp-'));
    await mkdir(join(dir, 'web'));
    await writeFile(join(dir, 'web', 'index.html'), '<!doctype html><title>bubble</title>');
    web = await createBubbleServer({
      dataDir: join(dir, 'data'),
      port: 0,
      webRoot: join(dir, 'web'),
      oidc: { issuer: fake.issuer, audience: 'api', clientId: 'web', retryAfterFailureMs: 1_000 },
    });
    const connectSrc = async () => {
      const csp = (await fetch(`${web!.url}/`)).headers.get('content-security-policy') ?? '';
      return csp.split('; ').find((d) => d.startsWith('connect-src '));
    };
    // The startup fetch failed; within the hold-off the page is served at once with the issuer's origin only.
    for (let i = 0; i < 50 && fake.count(DISCOVERY) === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(fake.count(DISCOVERY)).toBe(1);
    const startedAt = Date.now();
    expect(await connectSrc()).toBe(`connect-src 'self' ${fake.issuer}`);
    expect(Date.now() - startedAt).toBeLessThan(500);
    expect(fake.count(DISCOVERY)).toBe(1);

    // The provider is back, with its token endpoint on another origin; no JWT has arrived.
    fake.answer(DISCOVERY, 200, metadata(fake.issuer, { token_endpoint: 'https://tokens.example/oauth/token' }));
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await connectSrc()).toBe(`connect-src 'self' ${fake.issuer} https://tokens.example`);
    expect(fake.count(DISCOVERY)).toBe(2);
    // Known now: nothing more is fetched for later pages.
    expect(await connectSrc()).toBe(`connect-src 'self' ${fake.issuer} https://tokens.example`);
    expect(fake.count(DISCOVERY)).toBe(2);
  });
});
