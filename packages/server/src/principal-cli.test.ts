import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, serveCli, type ServeProcess } from './testing/cli-process.js';
import { startOidcTestProvider, type OidcTestProvider } from './testing/oidc-test-provider.js';
import { httpCall } from './testing/test-client.js';
import { TestSocket } from './ws/ws-test-client.js';

let dataDir: string;
const running: ServeProcess[] = [];
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'bubble-cli-'));
});
afterEach(async () => {
  for (const server of running.splice(0)) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await rm(dataDir, { recursive: true, force: true });
});

const cli = async (...args: string[]) => JSON.parse((await runCli([...args, '--data', dataDir])).stdout);
const serve = (...args: string[]): ServeProcess => {
  const server = serveCli(['--port', '0', '--data', dataDir, '--log-level', 'silent', ...args]);
  running.push(server);
  return server;
};

describe('bubble-server principal list, mint-token, revoke-tokens', () => {
  it('lists every principal as one JSON array, ordered by id', async () => {
    expect(await cli('principal', 'list')).toEqual([]);
    await cli('principal', 'create-human', 'carol');
    await cli('principal', 'create-human', 'alice', '--display-name', 'Alice');
    const list = await cli('principal', 'list');
    expect(list).toEqual([
      {
        principalId: 'alice',
        kind: 'human',
        displayName: 'Alice',
        ownerPrincipalIds: [],
        createdAt: expect.any(String),
      },
      {
        principalId: 'carol',
        kind: 'human',
        displayName: 'carol',
        ownerPrincipalIds: [],
        createdAt: expect.any(String),
      },
    ]);
  });

  it('mints a token for a principal, printed once; an unknown id is exit 1', async () => {
    const created = await cli('principal', 'create-human', 'alice');
    const minted = await cli('principal', 'mint-token', 'alice');
    expect(minted).toEqual({
      principal: created.principal,
      token: {
        tokenId: expect.stringMatching(/^tok_/),
        token: expect.stringMatching(/^bubble_user_[A-Za-z0-9_-]{43,}$/),
        createdAt: expect.any(String),
      },
    });
    expect(minted.token.tokenId).not.toBe(created.token.tokenId);
    const url = await serve().listening;
    expect(
      (await httpCall(url, 'GET', '/v1/auth/whoami', { token: minted.token.token })).body.principal.principalId,
    ).toBe('alice');
    const bot = await httpCall(url, 'POST', '/v1/principals', {
      token: minted.token.token,
      body: { principalId: 'bot-a', kind: 'bot' },
    });
    const botToken = await cli('principal', 'mint-token', 'bot-a');
    expect(botToken.token.token).toMatch(/^bubble_agent_/);
    expect(
      (await httpCall(url, 'GET', '/v1/auth/whoami', { token: botToken.token.token })).body.principal.principalId,
    ).toBe(bot.body.principal.principalId);

    const unknown = await runCli(['principal', 'mint-token', 'nobody', '--data', dataDir]).catch((e) => e);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('principal nobody not found');
  });

  it('revokes every token of a principal; a running server refuses them and closes their sockets with 4003', async () => {
    const alice = await cli('principal', 'create-human', 'alice');
    const second = await cli('principal', 'mint-token', 'alice');
    const bob = await cli('principal', 'create-human', 'bob');
    const url = await serve().listening;
    const wsUrl = `${url.replace('http', 'ws')}/v1/ws`;
    const sockets = await Promise.all(
      [alice.token.token, second.token.token].map((t) => TestSocket.authenticated(wsUrl, t)),
    );
    const bystander = await TestSocket.authenticated(wsUrl, bob.token.token);
    // The token is in the server's cache of good tokens: the revocation must reach that too.
    expect((await httpCall(url, 'GET', '/v1/auth/whoami', { token: alice.token.token })).status).toBe(200);

    const started = Date.now();
    const revoked = await cli('principal', 'revoke-tokens', 'alice');
    expect(revoked).toEqual({
      principalId: 'alice',
      revokedTokenIds: expect.arrayContaining([alice.token.tokenId, second.token.tokenId]),
      // alice never signed in with an identity provider: no JWT maps to her.
      jwtsIssuedBefore: null,
    });
    expect(revoked.revokedTokenIds).toHaveLength(2);
    for (const { socket } of sockets) expect((await socket.closed).code).toBe(4003);
    // The server reads the revocation log every second.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await httpCall(url, 'GET', '/v1/auth/whoami', { token: alice.token.token })).status).toBe(401);
    expect((await httpCall(url, 'GET', '/v1/auth/whoami', { token: second.token.token })).status).toBe(401);
    expect(await bystander.socket.roundTrip()).toEqual([]);
    bystander.socket.close();
    expect(await cli('principal', 'revoke-tokens', 'alice')).toEqual({
      principalId: 'alice',
      revokedTokenIds: [],
      jwtsIssuedBefore: null,
    });
    const unknown = await runCli(['principal', 'revoke-tokens', 'nobody', '--data', dataDir]).catch((e) => e);
    expect(unknown.code).toBe(1);
  });
});

describe('bubble-server serve with an identity provider', () => {
  let idp: OidcTestProvider;
  beforeEach(async () => {
    idp = await startOidcTestProvider({ accounts: { zoe: { name: 'Zoe', preferred_username: 'zoe' } } });
  });
  afterEach(async () => {
    await idp.close();
  });

  it('takes the issuer from flags, advertises it, and accepts its JWTs', async () => {
    const url = await serve(
      '--oidc-issuer',
      idp.issuer,
      '--oidc-audience',
      idp.audience,
      '--oidc-client-id',
      idp.clientId,
    ).listening;
    expect((await httpCall(url, 'GET', '/v1/info')).body.auth).toEqual({
      oidc: { issuer: idp.issuer, clientId: idp.clientId, audience: idp.audience },
    });
    const jwt = (await idp.login('zoe')).accessToken;
    expect((await httpCall(url, 'GET', '/v1/auth/whoami', { token: jwt })).body.principal).toMatchObject({
      principalId: 'zoe',
      displayName: 'Zoe',
    });
    expect((await cli('principal', 'list')).map((p: { principalId: string }) => p.principalId)).toEqual(['zoe']);
  });

  it("revoke-tokens ends a person's JWTs too: the server refuses them and closes their sockets with 4003; a new sign-in works", async () => {
    const url = await serve(
      '--oidc-issuer',
      idp.issuer,
      '--oidc-audience',
      idp.audience,
      '--oidc-client-id',
      idp.clientId,
    ).listening;
    const wsUrl = `${url.replace('http', 'ws')}/v1/ws`;
    const jwt = (await idp.login('zoe')).accessToken;
    const whoami = (token: string) => httpCall(url, 'GET', '/v1/auth/whoami', { token });
    // The JWT is in the server's cache of good credentials, and a socket is open with it.
    expect((await whoami(jwt)).status).toBe(200);
    const { socket } = await TestSocket.authenticated(wsUrl, jwt);
    // A local token of the same person (minted for the CLI) is revoked with the rest.
    const local = await httpCall(url, 'POST', '/v1/auth/tokens', { token: jwt });
    const localSocket = await TestSocket.authenticated(wsUrl, local.body.token.token);
    await cli('principal', 'create-human', 'bob');
    const bob = await cli('principal', 'mint-token', 'bob');
    const bystander = await TestSocket.authenticated(wsUrl, bob.token.token);

    const started = Date.now();
    const revoked = await cli('principal', 'revoke-tokens', 'zoe');
    const closed = await Promise.race([
      socket.closed,
      new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5_000)),
    ]);
    expect(closed).toEqual({ code: 4003, reason: 'credential revoked' });
    expect((await localSocket.socket.closed).code).toBe(4003);
    expect(Date.now() - started).toBeLessThan(3_000);
    const refused = await whoami(jwt);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('revoked');
    expect(revoked).toEqual({
      principalId: 'zoe',
      revokedTokenIds: [local.body.token.tokenId],
      jwtsIssuedBefore: expect.any(String),
    });
    // Nobody else is touched.
    expect(await bystander.socket.roundTrip()).toEqual([]);
    bystander.socket.close();

    // Signing in again (a token issued after the revocation: iat counts whole seconds) works, over HTTP and WebSocket.
    const cutoff = Date.parse(revoked.jwtsIssuedBefore);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.ceil(cutoff / 1000) * 1000 - Date.now() + 50)));
    const fresh = (await idp.login('zoe')).accessToken;
    expect((await whoami(fresh)).body.principal).toMatchObject({ principalId: 'zoe' });
    const again = await TestSocket.authenticated(wsUrl, fresh);
    expect(await again.socket.roundTrip()).toEqual([]);
    again.socket.close();
    expect((await whoami(jwt)).status).toBe(401);
  });

  it('reads a --config file, a flag winning over it', async () => {
    const file = join(dataDir, 'bubble.json');
    await writeFile(
      file,
      JSON.stringify({ oidc: { issuer: idp.issuer, audience: idp.audience, clientId: 'from-file' } }),
    );
    const url = await serve('--config', file, '--oidc-client-id', 'from-flag').listening;
    expect((await httpCall(url, 'GET', '/v1/info')).body.auth.oidc).toEqual({
      issuer: idp.issuer,
      clientId: 'from-flag',
      audience: idp.audience,
    });
  });

  it.each([
    [['--oidc-issuer', 'https://x.example/'], '--oidc-audience (or oidc.audience in --config) is needed'],
    [['--oidc-issuer', 'http://idp.example/', '--oidc-audience', 'a', '--oidc-client-id', 'c'], 'must use https'],
    [['--config', '/nonexistent/bubble.json'], 'cannot read --config /nonexistent/bubble.json: ENOENT'],
  ])('refuses %j with exit 2', async (args, message) => {
    const result = await runCli(['serve', '--port', '0', '--data', dataDir, ...args]).catch((e) => e);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
