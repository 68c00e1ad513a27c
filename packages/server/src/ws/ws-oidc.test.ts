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
    oidc: { issuer: idp.issuer, audience: idp.audience, clientId: idp.clientId, ...(clockToleranceSeconds === undefined ? {} : { clockToleranceSeconds }) },
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

  it('closes with 4001 saying why for a bad JWT', async () => {
    await start();
    const socket = await TestSocket.open(server.wsUrl);
    socket.send({ type: 'client.auth', token: await idp.signAccessToken({ sub: 'alice', aud: 'https://other.example' }) });
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
    const lastSeq = (seen['event'] as { seq: number }).seq;
    const openedAt = Date.now();
    const closed = await socket.closed;
    expect(closed.code).toBe(4001);
    expect(closed.reason).toContain('expired');
    expect(Date.now() - openedAt).toBeLessThan(3_000);
    // The old token no longer works over HTTP either.
    expect((await fetch(`${server.url}/v1/auth/whoami`, { headers: { authorization: `Bearer ${first}` } })).status).toBe(401);

    idp.setAccessTokenTtl(3600);
    const second = (await idp.login('alice')).accessToken;
    await new TestApi(server.url, second).note(thread.threadId, 'while away');
    const again = await TestSocket.authenticated(server.wsUrl, second);
    again.socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: lastSeq });
    expect(await again.socket.next()).toMatchObject({ type: 'subscribed', id: 's' });
    expect(await again.socket.next()).toMatchObject({ type: 'event', event: { seq: lastSeq + 1, data: { text: 'while away' } } });
    again.socket.close();
  });
});
