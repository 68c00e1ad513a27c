import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcTestProvider, type OidcTestProvider } from './oidc-test-provider.js';

let idp: OidcTestProvider;
beforeAll(async () => {
  idp = await startOidcTestProvider({
    accounts: { alice: { name: 'Alice Liddell', preferred_username: 'alice', email: 'alice@example.test' } },
  });
});
afterAll(async () => {
  await idp.close();
});

describe('the OIDC test provider', () => {
  it('signs a person in through the real code flow and issues a JWT access token for the audience', async () => {
    const tokens = await idp.login('alice');
    const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.accessToken, jwks, {
      issuer: idp.issuer,
      audience: idp.audience,
    });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: idp.currentKid, typ: 'at+jwt' });
    expect(payload).toMatchObject({
      sub: 'alice',
      name: 'Alice Liddell',
      preferred_username: 'alice',
      email: 'alice@example.test',
      client_id: idp.clientId,
    });
    expect(tokens.refreshToken).toEqual(expect.any(String));
    const discovery = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json();
    expect(discovery).toMatchObject({ issuer: idp.issuer, jwks_uri: `${idp.issuer}/jwks` });
  });

  it('renews an access token with its refresh token (what a browser does before expiry)', async () => {
    const tokens = await idp.login('alice');
    const response = await fetch(`${idp.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(idp.redirectUri).origin },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refreshToken!,
        client_id: idp.clientId,
      }).toString(),
    });
    expect(response.status).toBe(200);
    // A browser on the redirect URI's origin may call the token endpoint.
    expect(response.headers.get('access-control-allow-origin')).toBe(new URL(idp.redirectUri).origin);
    const renewed = (await response.json()) as { access_token: string; refresh_token: string };
    const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    const { payload } = await jwtVerify(renewed.access_token, jwks, { issuer: idp.issuer, audience: idp.audience });
    expect(payload).toMatchObject({ sub: 'alice', name: 'Alice Liddell' });
  });

  it('rotates its key, goes down and comes back', async () => {
    const before = idp.currentKid;
    const kid = await idp.rotateKey();
    expect(kid).not.toBe(before);
    const tokens = await idp.login('bob');
    expect(decodeProtectedHeader(tokens.accessToken).kid).toBe(kid);
    const keys = (await (await fetch(`${idp.issuer}/jwks`)).json()) as { keys: Array<{ kid: string }> };
    expect(keys.keys.map((k) => k.kid)).toEqual([kid, before]);
    await idp.stop();
    await expect(fetch(`${idp.issuer}/jwks`)).rejects.toThrow();
    await idp.start();
    expect((await fetch(`${idp.issuer}/jwks`)).status).toBe(200);
    idp.setPathDown('/jwks', true);
    expect((await fetch(`${idp.issuer}/jwks`)).status).toBe(503);
    idp.setPathDown('/jwks', false);
  });
});
