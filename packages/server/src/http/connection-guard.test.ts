import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { healthzMs, httpCall } from '../testing/test-client.js';

/** Connection hygiene (issue 13 row 3): real TCP on loopback, the attacker on its own loopback address. */
let server: TestServer;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server.stop();
});

/** A TCP connection from `localAddress` that sends nothing; resolves once connected, with what the server says and when it hangs up. */
function silent(port: number, localAddress: string) {
  return new Promise<{ socket: Socket; closed: Promise<string> }>((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    sockets.push(socket);
    let said = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
    const closed = new Promise<string>((done) => socket.once('close', () => done(said)));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

describe('connection limits', () => {
  it('refuses connections past the per-address cap with 429 while everyone else is served, and closes the silent ones after the header timeout', async () => {
    server = await startTestServer({
      connections: { maxPerAddress: 20, headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 },
    });
    const { token } = await server.createHuman('alice');
    const port = Number(new URL(server.url).port);
    const held = await Promise.all(Array.from({ length: 20 }, () => silent(port, '127.0.0.2')));
    const refused = await Promise.all(Array.from({ length: 20 }, () => silent(port, '127.0.0.2')));
    for (const { closed } of refused) {
      const said = await closed;
      expect(said).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
      expect(said).toContain('Retry-After: 5');
      expect(said).toContain('too many open connections: 127.0.0.2 holds 20 connections');
    }
    // Others are served meanwhile.
    expect(await healthzMs(server.url)).toBeLessThan(1_000);
    const thread = await httpCall(server.url, 'POST', '/v1/threads', { token: token.token, body: {} });
    expect(thread.status).toBe(201);
    // The silent ones are closed once the header timeout has passed (checked every second), without a word:
    // an answer left on a browser's preconnected socket would be read as the answer to its next request.
    const started = performance.now();
    expect(await Promise.all(held.map(({ closed }) => closed))).toEqual(held.map(() => ''));
    expect(performance.now() - started).toBeLessThan(5_000);
    // Their address may connect again once the server has let go of them.
    let answer = '';
    for (let attempt = 0; attempt < 20 && !answer.startsWith('HTTP/1.1 200'); attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      const again = await silent(port, '127.0.0.2');
      again.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      answer = await again.closed;
    }
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
  });

  it('answers 408 to a request whose headers stall past the timeout', async () => {
    server = await startTestServer({ connections: { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 } });
    const port = Number(new URL(server.url).port);
    const { socket, closed } = await silent(port, '127.0.0.4');
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    expect(await closed).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  });

  it('closes an idle keep-alive connection after its timeout', async () => {
    server = await startTestServer({ connections: { keepAliveTimeoutMs: 300 } });
    const port = Number(new URL(server.url).port);
    const { socket, closed } = await silent(port, '127.0.0.3');
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const said = await closed;
    expect(said).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(said).toContain('Keep-Alive: timeout=');
  });
});
