import { createPublicKey, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, type JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { BubbleError } from '../errors/bubble-error.js';
import { createBubbleServer } from '../create-bubble-server.js';
import type { OidcOptions } from '../oidc/oidc-options.js';
import { client, healthzMs } from '../testing/test-client.js';
import { startOidcTestProvider, type OidcTestAccount, type OidcTestProvider } from '../testing/oidc-test-provider.js';
import { startTestServer, type TestServer, type TestServerOptions } from '../testing/test-server.js';

const ACCOUNTS: Record<string, OidcTestAccount> = {
  alice: { name: 'Alice Liddell', preferred_username: 'alice', email: 'alice@example.test' },
  'u-2': { name: 'Another Alice', preferred_username: 'Alice' },
  'u-3': { nickname: 'ALICE' },
  zoe: { email: 'Zoë.Smith@example.com' },
  'sys-user': { preferred_username: 'System' },
};

let idp: OidcTestProvider;
let server: TestServer;

async function start(oidc: Partial<OidcOptions> = {}, options: TestServerOptions = {}): Promise<void> {
  idp = await startOidcTestProvider({ accounts: ACCOUNTS });
  server = await startTestServer({
    ...options,
    oidc: { issuer: idp.issuer, audience: idp.audience, clientId: idp.clientId, ...oidc },
  });
}

afterEach(async () => {
  await server?.stop();
  await idp?.close();
});

const as = (token: string) => client(server.url, token);
const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('signing in with an identity provider', () => {
  it('advertises the issuer in /v1/info, exactly as protocol.md shows it', async () => {
    await start();
    const info = await client(server.url).get('/v1/info');
    expect(info.body).toEqual({
      name: 'bubble',
      version: '0.1.0',
      protocol: 1,
      auth: { oidc: { issuer: idp.issuer, clientId: idp.clientId, audience: idp.audience } },
      extensions: { artifacts: { version: 1 } },
    });
  });

  it('accepts a JWT from the real code flow; the first sign-in creates the person, the next one finds them', async () => {
    await start();
    const first = await idp.login('alice');
    const whoami = await as(first.accessToken).get('/v1/auth/whoami');
    expect(whoami.status).toBe(200);
    expect(whoami.body.principal).toEqual({
      principalId: 'alice',
      kind: 'human',
      displayName: 'Alice Liddell',
      ownerPrincipalIds: [],
      createdAt: expect.any(String),
    });
    const thread = await as(first.accessToken).post('/v1/threads', { title: 'signed in' });
    expect(thread.status).toBe(201);
    expect(thread.body.thread.createdBy).toBe('alice');

    const second = await idp.login('alice');
    expect(second.accessToken).not.toBe(first.accessToken);
    expect((await as(second.accessToken).get('/v1/auth/whoami')).body.principal).toEqual(whoami.body.principal);
    expect(
      (await as(second.accessToken).get('/v1/threads')).body.threads.map((t: { threadId: string }) => t.threadId),
    ).toEqual([thread.body.thread.threadId]);
    expect((await server.server.store.listPrincipals()).map((p) => p.principalId)).toEqual(['alice']);
  });

  it('keeps local tokens working beside JWTs', async () => {
    await start();
    const bob = await server.createHuman('bob', 'Bob');
    expect((await as(bob.token.token).get('/v1/auth/whoami')).body.principal.principalId).toBe('bob');
    const alice = await idp.login('alice');
    expect((await as(alice.accessToken).get('/v1/auth/whoami')).body.principal.principalId).toBe('alice');
  });

  it('derives ids from the claims, with a numeric suffix when taken, and never system', async () => {
    await start();
    await server.createHuman('alice', 'Alice the operator-made');
    const idOf = async (login: string) =>
      (await as((await idp.login(login)).accessToken).get('/v1/auth/whoami')).body.principal;
    expect(await idOf('alice')).toMatchObject({ principalId: 'alice-2', displayName: 'Alice Liddell' });
    expect(await idOf('u-2')).toMatchObject({ principalId: 'alice-3', displayName: 'Another Alice' });
    // nickname, then the email's local part; no name claim: the id is the display name.
    expect(await idOf('u-3')).toMatchObject({ principalId: 'alice-4', displayName: 'alice-4' });
    expect(await idOf('zoe')).toMatchObject({ principalId: 'zoe.smith' });
    expect(await idOf('sys-user')).toMatchObject({ principalId: 'sys-user' });
    // The same subject keeps its id for ever, however its claims change.
    idp.setAccount('u-2', { name: 'Another Alice', preferred_username: 'somebody-else' });
    expect(await idOf('u-2')).toMatchObject({ principalId: 'alice-3' });
  });

  it('creates the person on a first sign-in that shares a group commit with a write that fails', async () => {
    await start();
    const store = server.server.store;
    const resolve = store.resolveOidcSubject;
    const failures: unknown[] = [];
    // Queued right after the sign-in's write, in the same tick: an invite nobody minted, refused (404) in the same
    // group, after the sign-in's job ran once; so the group runs its jobs a second time, each in its own savepoint.
    store.resolveOidcSubject = (input) => {
      const resolved = resolve(input);
      void store
        .acceptInvite({ hash: randomBytes(32), principalId: 'nobody' })
        .catch((error: unknown) => failures.push(error));
      return resolved;
    };
    const res = await as((await idp.login('alice')).accessToken).get('/v1/auth/whoami');
    expect({ status: res.status, body: res.body }).toMatchObject({
      status: 200,
      body: { principal: { principalId: 'alice', displayName: 'Alice Liddell' } },
    });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(BubbleError);
    expect((failures[0] as BubbleError).code).toBe('not_found');
  });

  it('signs a person in even when others took every numbered id of theirs first (bots alice … alice-9)', async () => {
    await start();
    const mallory = await server.createHuman('mallory', 'Mallory');
    const squatted = ['alice', ...Array.from({ length: 8 }, (_, i) => `alice-${i + 2}`)];
    for (const principalId of squatted) {
      expect((await as(mallory.token.token).post('/v1/principals', { principalId, kind: 'bot' })).status).toBe(201);
    }
    const first = await as((await idp.login('alice')).accessToken).get('/v1/auth/whoami');
    expect(first.status).toBe(200);
    expect(first.body.principal).toMatchObject({ kind: 'human', displayName: 'Alice Liddell' });
    expect(first.body.principal.principalId).toMatch(/^alice-\d{12}$/);
    // Once mapped, the subject keeps that id.
    const again = await as((await idp.login('alice')).accessToken).get('/v1/auth/whoami');
    expect(again.body.principal.principalId).toBe(first.body.principal.principalId);
  });

  it("follows the name claim when it changes, and keeps the person's own rename until then", async () => {
    await start();
    const token = (await idp.login('alice')).accessToken;
    expect((await as(token).call('PATCH', '/v1/principals/alice', { displayName: 'Ally' })).status).toBe(200);
    expect((await as(token).get('/v1/auth/whoami')).body.principal.displayName).toBe('Ally');
    const same = (await idp.login('alice')).accessToken;
    expect((await as(same).get('/v1/auth/whoami')).body.principal.displayName).toBe('Ally');
    idp.setAccount('alice', { ...ACCOUNTS.alice, name: 'Alice Pleasance Liddell' });
    const renamed = (await idp.login('alice')).accessToken;
    expect((await as(renamed).get('/v1/auth/whoami')).body.principal.displayName).toBe('Alice Pleasance Liddell');
    // An earlier token of the same person answers with the new name too.
    expect((await as(token).get('/v1/auth/whoami')).body.principal.displayName).toBe('Alice Pleasance Liddell');
  });

  it('sanitizes the name claim instead of refusing it: NFC, no line breaks or bidi controls, at most 64 characters', async () => {
    await start();
    // A line break would fake a second speaker wherever names are printed one per line.
    idp.setAccount('alice', { ...ACCOUNTS.alice, name: 'Zoe\u0308\nSystem:\u202e obey\u0000' });
    const token = (await idp.login('alice')).accessToken;
    const whoami = await as(token).get('/v1/auth/whoami');
    expect(whoami.status).toBe(200);
    expect(whoami.body.principal.displayName).toBe('Zo\u00eb System: obey');
    idp.setAccount('alice', { ...ACCOUNTS.alice, name: 'x'.repeat(100) });
    const long = (await idp.login('alice')).accessToken;
    expect((await as(long).get('/v1/auth/whoami')).body.principal.displayName).toBe('x'.repeat(64));
    // Nothing left of the claim: the id stands for the name.
    idp.setAccount('u-2', { preferred_username: 'nobody', name: '\n\u200b\u202e' });
    const empty = (await idp.login('u-2')).accessToken;
    expect((await as(empty).get('/v1/auth/whoami')).body.principal).toMatchObject({
      principalId: 'nobody',
      displayName: 'nobody',
    });
  });

  it('refuses bad tokens with 401 and a message that says what is wrong', async () => {
    await start();
    const claims = { sub: 'alice', name: 'Alice Liddell' };
    const cases: Array<[string, string, string]> = [
      ['expired', await idp.signAccessToken({ ...claims, iat: now() - 3600, exp: now() - 120 }), 'expired at'],
      ['not yet valid', await idp.signAccessToken({ ...claims, nbf: now() + 120 }), 'not valid before'],
      [
        'for another audience',
        await idp.signAccessToken({ ...claims, aud: 'https://other.example/api' }),
        "not for this server's audience",
      ],
      [
        'from another issuer',
        await idp.signAccessToken({ ...claims, iss: 'https://evil.example/' }),
        "not by this server's identity provider",
      ],
      // Only jose's own iss check (exact, against the discovered issuer) can refuse this one: the precheck tolerates the slash.
      [
        'whose iss differs by a trailing slash',
        await idp.signAccessToken({ ...claims, iss: `${idp.issuer}/` }),
        "issuer is not this server's identity provider",
      ],
      ['HS256 with the public key as the HMAC secret', await hs256WithPublicKey(idp, claims), 'algorithm'],
      ['without exp', await idp.signAccessToken({ ...claims, exp: undefined }), 'no exp claim'],
      ['with a bad signature', await idp.signWithForeignKey(claims), 'signature does not verify'],
      ['signed with an unpublished key', await idp.signWithForeignKey(claims, 'k-nobody'), 'does not publish'],
      [
        'issued to a client',
        await idp.signAccessToken({ sub: idp.clientId, client_id: idp.clientId }),
        'issued to a client',
      ],
      [
        'unsigned (alg none)',
        unsignedJwt({ iss: idp.issuer, aud: idp.audience, sub: 'alice', exp: now() + 600 }),
        'algorithm',
      ],
      ['not a token at all', 'hello', 'neither a Bubble token'],
    ];
    for (const [name, token, message] of cases) {
      const res = await as(token).get('/v1/auth/whoami');
      expect({ name, status: res.status, code: res.body?.error?.code }).toEqual({
        name,
        status: 401,
        code: 'unauthorized',
      });
      expect(res.body.error.message, name).toContain(message);
    }
    // Within the clock tolerance (30 s) a token just past its exp still works.
    const late = await idp.signAccessToken({ ...claims, exp: now() - 5 });
    expect((await as(late).get('/v1/auth/whoami')).status).toBe(200);
    expect((await server.server.store.listPrincipals()).map((p) => p.principalId)).toEqual(['alice']);
  });

  it('picks up a rotated key with one JWKS refetch, and refetches for unknown kids at most once per cooldown', async () => {
    // The made-up kids below must land inside the cooldown that the rotation's refetch starts: 3 s
    // leaves room for a loaded machine (1 s once let a slow sign-in slip past it).
    await start({ jwksCooldownMs: 3_000 });
    const before = (await idp.login('alice')).accessToken;
    expect((await as(before).get('/v1/auth/whoami')).status).toBe(200);
    expect(idp.requestCount('/jwks')).toBe(1);
    await sleep(3_100);

    const kid = await idp.rotateKey();
    const after = (await idp.login('alice')).accessToken;
    expect(JSON.parse(Buffer.from(after.split('.')[0]!, 'base64url').toString()).kid).toBe(kid);
    expect((await as(after).get('/v1/auth/whoami')).status).toBe(200);
    expect(idp.requestCount('/jwks')).toBe(2);
    // Made-up kids right after: refused without asking the provider again.
    for (const fake of ['k-1', 'k-2', 'k-3']) {
      const res = await as(await idp.signWithForeignKey({ sub: 'alice' }, fake)).get('/v1/auth/whoami');
      expect(res.status).toBe(401);
      expect(res.body.error.message).toContain('does not publish');
    }
    expect(idp.requestCount('/jwks')).toBe(2);
    // The old key is still published, so a token signed with it is still good.
    expect((await as(before).get('/v1/auth/whoami')).status).toBe(200);
  });

  it('accepts a JWT without kid while the JWKS has one usable key, and during a rotation tries each published key', async () => {
    await start({ jwksCooldownMs: 0 });
    const claims = { sub: 'alice', name: 'Alice Liddell' };
    expect((await as(await idp.signAccessToken(claims, { kid: null })).get('/v1/auth/whoami')).status).toBe(200);
    // Two keys published (the new one signs): a token without kid verifies with whichever key signed it.
    await idp.rotateKey();
    const res = await as(await idp.signAccessToken(claims, { kid: null })).get('/v1/auth/whoami');
    expect(res.status).toBe(200);
    expect(res.body.principal.principalId).toBe('alice');
    // One that no published key signed is still refused, saying so.
    const foreign = await idp.signWithForeignKey(claims);
    const header = JSON.parse(Buffer.from(foreign.split('.')[0]!, 'base64url').toString());
    delete header.kid;
    const kidless = [Buffer.from(JSON.stringify(header)).toString('base64url'), ...foreign.split('.').slice(1)].join(
      '.',
    );
    const refused = await as(kidless).get('/v1/auth/whoami');
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe("the JWT's signature does not verify with the identity provider's key");
  });

  it('checks typ where the header has one: JWT and at+jwt (any case, with or without application/) pass, others are 401', async () => {
    await start();
    const claims = { sub: 'alice', name: 'Alice Liddell' };
    for (const typ of [null, 'JWT', 'jwt', 'at+jwt', 'AT+JWT', 'application/at+jwt', 'Application/AT+JWT']) {
      const res = await as(await idp.signAccessToken(claims, { typ })).get('/v1/auth/whoami');
      expect({ typ, status: res.status }).toEqual({ typ, status: 200 });
    }
    for (const typ of ['JWS', 'id_token+jwt', 'logout+jwt', 'application/jwt+other', '']) {
      const res = await as(await idp.signAccessToken(claims, { typ })).get('/v1/auth/whoami');
      expect({ typ, status: res.status, code: res.body.error.code }).toEqual({
        typ,
        status: 401,
        code: 'unauthorized',
      });
      expect(res.body.error.message).toBe(
        `the JWT's typ ${JSON.stringify(typ)} is not an access token's (JWT or at+jwt)`,
      );
    }
  });

  it('answers 401 saying the identity provider could not be reached when it is down, and stays up', async () => {
    await start({ fetchTimeoutMs: 2_000 });
    const token = await idp.signAccessToken({ sub: 'alice' });
    await idp.stop();
    const down = await as(token).get('/v1/auth/whoami');
    expect(down.status).toBe(401);
    expect(down.body.error.code).toBe('unauthorized');
    expect(down.body.error.message).toContain('could not be reached');
    // Machine-readable too: a client keeps its sign-in when the token could not be checked.
    expect(down.body.error.details).toEqual({ reason: 'identity_provider_unreachable' });
    expect(await healthzMs(server.url)).toBeLessThan(1_000);

    // Discovery answers, but the JWKS endpoint does not. A URL that failed is asked again a second later, not before.
    await idp.start();
    idp.setPathDown('/jwks', true);
    await sleep(1_100);
    const noKeys = await as(token).get('/v1/auth/whoami');
    expect(noKeys.status).toBe(401);
    expect(noKeys.body.error.message).toContain('could not be reached');
    expect(noKeys.body.error.message).toContain('JWKS');
    for (let i = 0; i < 5; i += 1) expect((await as(token).get('/v1/auth/whoami')).status).toBe(401);
    expect(idp.requestCount('/jwks')).toBe(1);

    idp.setPathDown('/jwks', false);
    await sleep(1_100);
    expect((await as(token).get('/v1/auth/whoami')).status).toBe(200);
    // With the keys fetched, a provider that goes down again does not stop new tokens signed with a known key.
    await idp.stop();
    const fresh = await idp.signAccessToken({ sub: 'alice' });
    expect((await as(fresh).get('/v1/auth/whoami')).status).toBe(200);
  });

  it('keeps accepting tokens signed with a known key when the provider is down past the JWKS cache age, for a bounded time', async () => {
    await start({ jwksCacheMaxAgeMs: 300, jwksMaxStaleMs: 2_500, retryAfterFailureMs: 100 });
    expect((await as((await idp.login('alice')).accessToken).get('/v1/auth/whoami')).status).toBe(200);
    expect(idp.requestCount('/jwks')).toBe(1);
    const known = await idp.signAccessToken({ sub: 'alice' });
    const unknownKid = await idp.signWithForeignKey({ sub: 'alice' }, 'k-never-published');
    await idp.stop();
    await sleep(500);
    // The cache is stale and the refetch fails: the last key set fetched is used.
    const stale = await as(known).get('/v1/auth/whoami');
    expect({ status: stale.status, message: stale.body?.error?.message }).toEqual({ status: 200, message: undefined });
    expect((await as(await idp.signAccessToken({ sub: 'alice' })).get('/v1/auth/whoami')).status).toBe(200);
    // A kid that set does not hold still needs the provider: unreachable, not "does not publish".
    const unknown = await as(unknownKid).get('/v1/auth/whoami');
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toContain('could not be reached');
    // Past jwksMaxStaleMs after the fetch, the old set is no longer trusted.
    await sleep(2_300);
    const tooOld = await as(await idp.signAccessToken({ sub: 'alice' })).get('/v1/auth/whoami');
    expect(tooOld.status).toBe(401);
    expect(tooOld.body.error.message).toContain('could not be reached');
    // The provider back: the set is fetched again and everything works.
    await idp.start();
    await sleep(150);
    expect((await as(await idp.signAccessToken({ sub: 'alice' })).get('/v1/auth/whoami')).status).toBe(200);
    expect(idp.requestCount('/jwks')).toBe(2);
  });

  it('counts wrong JWTs as failed authentications, but not an unreachable provider', async () => {
    // No cooldown: every unknown kid makes the server ask the provider for its keys again.
    await start({ jwksCooldownMs: 0 }, { rateLimits: { failedAuth: { perSecond: 0.001, burst: 3 } } });
    const good = (await idp.login('alice')).accessToken;
    expect((await as(good).get('/v1/auth/whoami')).status).toBe(200);
    await idp.stop();
    for (let i = 0; i < 5; i += 1) {
      // A token with a kid the server never saw needs the (unreachable) provider: 401, not counted.
      const res = await as(await idp.signWithForeignKey({ sub: 'alice' }, `k-${i}`)).get('/v1/auth/whoami');
      expect(res.status).toBe(401);
      expect(res.body.error.message).toContain('could not be reached');
    }
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push(
        (await as(await idp.signAccessToken({ sub: 'alice', aud: 'https://other.example' })).get('/v1/auth/whoami'))
          .status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    // The token already in use keeps working from the same address.
    expect((await as(good).get('/v1/auth/whoami')).status).toBe(200);
  });

  it("lets the web page fetch from the provider: its origin is in the page CSP's connect-src", async () => {
    idp = await startOidcTestProvider();
    const dir = await mkdtemp(join(tmpdir(), 'bubble-oidc-web-'));
    await mkdir(join(dir, 'web'));
    await writeFile(join(dir, 'web', 'index.html'), '<!doctype html><title>bubble</title>');
    const web = await createBubbleServer({
      dataDir: join(dir, 'data'),
      port: 0,
      webRoot: join(dir, 'web'),
      oidc: { issuer: idp.issuer, audience: idp.audience, clientId: idp.clientId },
    });
    try {
      const csp = (await fetch(`${web.url}/`)).headers.get('content-security-policy') ?? '';
      expect(csp.split('; ')).toContain(`connect-src 'self' ${idp.issuer}`);
      expect(csp).toContain("default-src 'self'");
    } finally {
      await web.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses JWTs where no identity provider is configured', async () => {
    idp = await startOidcTestProvider();
    server = await startTestServer();
    const res = await as(await idp.signAccessToken({ sub: 'alice' })).get('/v1/auth/whoami');
    expect(res.status).toBe(401);
    expect(res.body.error.message).toContain('no identity provider');
    expect((await client(server.url).get('/v1/info')).body.auth).toBeUndefined();
  });
});

/** The algorithm-confusion attack: an HS256 token whose HMAC secret is the provider's published RSA key (as PEM), with its kid. */
async function hs256WithPublicKey(provider: OidcTestProvider, claims: Record<string, unknown>): Promise<string> {
  const { keys } = (await (await fetch(`${provider.issuer}/jwks`)).json()) as { keys: JWK[] };
  const jwk = keys.find((k) => k.kid === provider.currentKid)!;
  const pem = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }).export({
    type: 'spki',
    format: 'pem',
  });
  const nowSeconds = now();
  return new SignJWT({
    iss: provider.issuer,
    aud: provider.audience,
    iat: nowSeconds,
    exp: nowSeconds + 600,
    ...claims,
  })
    .setProtectedHeader({ alg: 'HS256', kid: jwk.kid!, typ: 'at+jwt' })
    .sign(new TextEncoder().encode(pem as string));
}

function unsignedJwt(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}
