import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOidcTestProvider, type OidcTestProvider } from '../testing/oidc-test-provider.js';
import { client } from '../testing/test-client.js';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { TestSocket } from '../ws/ws-test-client.js';

let w: TestWorld;
let idp: OidcTestProvider;
beforeEach(async () => {
  idp = await startOidcTestProvider({ accounts: { zoe: { name: 'Zoe', preferred_username: 'zoe' } } });
  w = await startTestWorld(['alice', 'bob'], {
    oidc: { issuer: idp.issuer, audience: idp.audience, clientId: idp.clientId },
  });
});
afterEach(async () => {
  await w.stop();
  await idp.close();
});

const tokenIdOf = async (token: string): Promise<string> =>
  (await client(w.server.url, token).get('/v1/auth/tokens')).body.tokens.find((t: { current?: boolean }) => t.current)
    .tokenId;

describe('GET/POST/DELETE /v1/auth/tokens', () => {
  it('lists the caller own tokens, the one in use marked current', async () => {
    const res = await w.as.alice!.get('/v1/auth/tokens');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tokens: [{ tokenId: expect.stringMatching(/^tok_/), createdAt: expect.any(String), current: true }],
    });
    expect((await w.anonymous.get('/v1/auth/tokens')).status).toBe(401);
  });

  it('mints another token for a person, shown once; each token sees itself as current', async () => {
    const first = await tokenIdOf(w.tokens.alice!);
    const minted = await w.as.alice!.post('/v1/auth/tokens');
    expect(minted.status).toBe(201);
    expect(minted.body).toEqual({
      token: {
        tokenId: expect.stringMatching(/^tok_/),
        token: expect.stringMatching(/^bubble_user_[A-Za-z0-9_-]{43,}$/),
        createdAt: expect.any(String),
      },
    });
    const second = minted.body.token;
    expect((await w.as.alice!.get('/v1/auth/tokens')).body.tokens).toEqual([
      { tokenId: first, createdAt: expect.any(String), current: true },
      { tokenId: second.tokenId, createdAt: second.createdAt },
    ]);
    const viaSecond = await w.withToken(second.token).get('/v1/auth/tokens');
    expect(
      viaSecond.body.tokens.map((t: { tokenId: string; current?: boolean }) => [t.tokenId, t.current === true]),
    ).toEqual([
      [first, false],
      [second.tokenId, true],
    ]);
    expect(viaSecond.text).not.toContain('bubble_user_');
    expect((await w.withToken(second.token).get('/v1/auth/whoami')).body.principal.principalId).toBe('alice');
    // A body that is not JSON is refused, as on POST /v1/principals/:id/tokens.
    expect((await w.as.alice!.call('POST', '/v1/auth/tokens', undefined, { rawBody: 'nope' })).status).toBe(400);
  });

  it("revokes one of one's own tokens: it stops at once and its sockets close with 4003, the others stay", async () => {
    const second = (await w.as.alice!.post('/v1/auth/tokens')).body.token;
    const doomed = await TestSocket.authenticated(w.server.wsUrl, second.token);
    const kept = await TestSocket.authenticated(w.server.wsUrl, w.tokens.alice!);
    expect((await w.as.alice!.delete(`/v1/auth/tokens/${second.tokenId}`)).status).toBe(204);
    expect((await doomed.socket.closed).code).toBe(4003);
    expect(await kept.socket.roundTrip()).toEqual([]);
    expect((await w.withToken(second.token).get('/v1/auth/whoami')).status).toBe(401);
    expect((await w.as.alice!.delete(`/v1/auth/tokens/${second.tokenId}`)).status).toBe(404);
    kept.socket.close();
  });

  it("cannot touch someone else's token; revoking the current one ends it", async () => {
    const bobs = await tokenIdOf(w.tokens.bob!);
    const res = await w.as.alice!.delete(`/v1/auth/tokens/${bobs}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await w.as.alice!.delete('/v1/auth/tokens/tok_nonexistent')).status).toBe(404);
    expect((await w.as.bob!.get('/v1/auth/whoami')).status).toBe(200);
    const mine = await tokenIdOf(w.tokens.alice!);
    expect((await w.as.alice!.delete(`/v1/auth/tokens/${mine}`)).status).toBe(204);
    expect((await w.as.alice!.get('/v1/auth/whoami')).status).toBe(401);
  });

  it('lets a bot list and revoke its own tokens, but not mint them (its owners do)', async () => {
    const bot = await w.bot('alice', 'bot-a');
    const listed = await bot.get('/v1/auth/tokens');
    expect(listed.body.tokens).toEqual([{ tokenId: expect.any(String), createdAt: expect.any(String), current: true }]);
    const minted = await bot.post('/v1/auth/tokens');
    expect(minted.status).toBe(403);
    expect(minted.body.error.message).toContain('owners');
    expect((await bot.delete(`/v1/auth/tokens/${listed.body.tokens[0].tokenId}`)).status).toBe(204);
    expect((await bot.get('/v1/auth/whoami')).status).toBe(401);
  });

  it('shows a person signed in with a JWT their local tokens, none current, and lets them mint one', async () => {
    const jwt = (await idp.login('zoe')).accessToken;
    const zoe = w.withToken(jwt);
    expect((await zoe.get('/v1/auth/tokens')).body).toEqual({ tokens: [] });
    const minted = (await zoe.post('/v1/auth/tokens')).body.token;
    expect((await zoe.get('/v1/auth/tokens')).body).toEqual({
      tokens: [{ tokenId: minted.tokenId, createdAt: minted.createdAt }],
    });
    expect((await w.withToken(minted.token).get('/v1/auth/whoami')).body.principal.principalId).toBe('zoe');
    expect((await zoe.delete(`/v1/auth/tokens/${minted.tokenId}`)).status).toBe(204);
    expect((await zoe.get('/v1/auth/whoami')).status).toBe(200);
  });
});
