import { afterEach, describe, expect, it } from 'vitest';
import { startOidcTestProvider, type OidcTestProvider } from '../testing/oidc-test-provider.js';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { TestApi } from './ws-test-api.js';
import { TestSocket } from './ws-test-client.js';

let idp: OidcTestProvider;
let server: TestServer;

afterEach(async () => {
  await server?.stop();
  await idp?.close();
});

async function start(clockToleranceSeconds?: number): Promise<void> {
  idp = await startOidcTestProvider({ accounts: { alice: { name: 'Alice', preferred_username: 'alice' } } });
  server = await startTestServer({
    oidc: {
      issuer: idp.issuer,
      audience: idp.audience,
      clientId: idp.clientId,
      clockToleranceSeconds,
    },
  });
}

describe('a JWT on the WebSocket', () => {
  it('authenticates client.auth like a local token', async () => {
    await start();
    const token = (await idp.login('alice')).accessToken;
    const api = new TestApi(server.url, token);
    const thread = await api.createThread({ title: 'live' });
    const { socket, ready } = await TestSocket.authenticated(server.wsUrl, token);
    expect(ready.principal).toMatchObject({ principalId: 'alice', kind: 'human', displayName: 'Alice' });
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 0 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 's', headSeq: 1 });
    expect(await socket.next()).toMatchObject({ type: 'event', id: 's', event: { seq: 1, type: 'participant_added' } });
    socket.close();
  });

  it("on jwts_revoked closes the principal's sockets whose JWT was issued before it with 4003, and no others", async () => {
    await start();
    await idp.login('alice');
    const now = Math.floor(Date.now() / 1000);
    const older = await idp.signAccessToken({ sub: 'alice', iat: now - 120 });
    const newer = await idp.signAccessToken({ sub: 'alice', iat: now });
    const local = (
      await new TestApi(server.url, newer).call<{ token: { token: string } }>('POST', '/v1/auth/tokens', {}, 201)
    ).token.token;
    const sockets = {
      older: await TestSocket.authenticated(server.wsUrl, older),
      newer: await TestSocket.authenticated(server.wsUrl, newer),
      local: await TestSocket.authenticated(server.wsUrl, local),
    };
    // As the revocation watcher publishes an operator's revoke-tokens made a minute ago (the store itself is untouched here).
    server.server.bus.publish({
      kind: 'jwts_revoked',
      principalId: 'alice',
      issuedBefore: new Date((now - 60) * 1000).toISOString(),
    });
    expect(await sockets.older.socket.closed).toEqual({ code: 4003, reason: 'credential revoked' });
    expect(await sockets.newer.socket.roundTrip()).toEqual([]);
    expect(await sockets.local.socket.roundTrip()).toEqual([]);
    sockets.newer.socket.close();
    sockets.local.socket.close();
  });

  it('closes with 4001 saying why for a bad JWT', async () => {
    await start();
    const socket = await TestSocket.open(server.wsUrl);
    socket.send({
      type: 'client.auth',
      token: await idp.signAccessToken({ sub: 'alice', aud: 'https://other.example' }),
    });
    const closed = await socket.closed;
    expect(closed.code).toBe(4001);
    expect(closed.reason).toContain('audience');
  });

  it('closes the socket with 4001 when its JWT expires; the client signs in again and resumes from its last seq', async () => {
    await start(0);
    idp.setAccessTokenTtl(2);
    const first = (await idp.login('alice')).accessToken;
    const api = new TestApi(server.url, first);
    const thread = await api.createThread();
    const { socket } = await TestSocket.authenticated(server.wsUrl, first);
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 0 });
    await socket.next((f) => f.type === 'event');
    await api.note(thread.threadId, 'before expiry');
    const seen = await socket.next((f) => f.type === 'event');
    const lastSeq = (seen.event as { seq: number }).seq;
    const openedAt = Date.now();
    const closed = await socket.closed;
    expect(closed.code).toBe(4001);
    expect(closed.reason).toContain('expired');
    expect(Date.now() - openedAt).toBeLessThan(3_000);
    // The old token no longer works over HTTP either.
    expect(
      (await fetch(`${server.url}/v1/auth/whoami`, { headers: { authorization: `Bearer ${first}` } })).status,
    ).toBe(401);

    idp.setAccessTokenTtl(3600);
    const second = (await idp.login('alice')).accessToken;
    await new TestApi(server.url, second).note(thread.threadId, 'while away');
    const again = await TestSocket.authenticated(server.wsUrl, second);
    again.socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: lastSeq });
    expect(await again.socket.next()).toMatchObject({ type: 'subscribed', id: 's' });
    expect(await again.socket.next()).toMatchObject({
      type: 'event',
      event: { seq: lastSeq + 1, data: { text: 'while away' } },
    });
    again.socket.close();
  });
});
