import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { httpCall, type TestResponse } from '../testing/test-client.js';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { TestSocket } from '../ws/ws-test-client.js';

/**
 * Trusted proxies (protocol.md, "Limits"; issue 28 finding 1) against the real server on loopback:
 * each 127.x.y.z source address stands for one machine, 127.0.0.1 for the proxy in front.
 */
let w: TestWorld | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await w?.stop();
  w = undefined;
});

const BAD = `bubble_user_${'B'.repeat(43)}`;
const FAILED_AUTH = { failedAuth: { perSecond: 0.01, burst: 3 } };

/** `GET /v1/auth/whoami` with `token` from `localAddress`, saying `X-Forwarded-For: forwardedFor` if given. */
const whoami = (token: string, localAddress: string, forwardedFor?: string): Promise<TestResponse> =>
  httpCall(w!.server.url, 'GET', '/v1/auth/whoami', {
    token,
    localAddress,
    ...(forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } }),
  });

/** A WebSocket upgrade from `localAddress` that sends nothing after it: resolves with the answer's status line. */
function upgrade(
  localAddress: string,
  forwardedFor: string,
): Promise<{ socket: Socket; status: string; said: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(new URL(w!.server.url).port), host: '127.0.0.1', localAddress });
    sockets.push(socket);
    let said = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      said += chunk;
      const end = said.indexOf('\r\n\r\n');
      if (end !== -1) resolve({ socket, status: said.slice(0, said.indexOf('\r\n')), said });
    });
    socket.once('error', reject);
    socket.write(
      [
        'GET /v1/ws HTTP/1.1',
        'Host: x',
        'Upgrade: websocket',
        'Connection: Upgrade',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version: 13',
        `X-Forwarded-For: ${forwardedFor}`,
        '',
        '',
      ].join('\r\n'),
    );
  });
}

/** A TCP connection from `localAddress` that sends nothing; resolves once connected. */
function silent(localAddress: string): Promise<{ said: () => string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(new URL(w!.server.url).port), host: '127.0.0.1', localAddress });
    sockets.push(socket);
    let said = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
    socket.once('connect', () => resolve({ said: () => said }));
    socket.once('error', reject);
  });
}

describe('the client address', () => {
  it('is the TCP peer when the peer is not a trusted proxy: its X-Forwarded-For is ignored, on HTTP and WebSocket', async () => {
    w = await startTestWorld(['alice'], { rateLimits: FAILED_AUTH, trustedProxies: ['127.0.0.1'] });
    // 127.0.0.2 is no proxy: naming a fresh client in each request does not buy it a fresh budget.
    const failures = [];
    for (let i = 0; i < 3; i += 1) failures.push((await whoami(BAD, '127.0.0.2', `198.51.100.${i}`)).status);
    expect(failures).toEqual([401, 401, 401]);
    expect((await whoami(BAD, '127.0.0.2', '198.51.100.9')).status).toBe(429);
    expect((await whoami(w.tokens.alice!, '127.0.0.2', '127.0.0.3')).status).toBe(429);
    const socket = await TestSocket.open(w.server.wsUrl, {
      localAddress: '127.0.0.2',
      headers: { 'x-forwarded-for': '198.51.100.10' },
    });
    socket.send({ type: 'client.auth', token: BAD });
    expect(await socket.next()).toMatchObject({ type: 'error', error: { code: 'rate_limited' } });
    // The address it claimed to forward for is untouched.
    expect((await whoami(BAD, '127.0.0.1', '198.51.100.9')).status).toBe(401);
    expect((await whoami(w.tokens.alice!, '127.0.0.3')).status).toBe(200);
  });

  it('is the TCP peer when no proxy is trusted (the default), whatever X-Forwarded-For says', async () => {
    w = await startTestWorld(['alice'], { rateLimits: FAILED_AUTH });
    for (let i = 0; i < 3; i += 1) expect((await whoami(BAD, '127.0.0.1', `198.51.100.${i}`)).status).toBe(401);
    expect((await whoami(BAD, '127.0.0.1', '198.51.100.7')).status).toBe(429);
  });

  it('from a trusted proxy is the client X-Forwarded-For names: its failed sign-ins lock out that client alone', async () => {
    w = await startTestWorld(['alice'], { rateLimits: FAILED_AUTH, trustedProxies: ['127.0.0.1', '::1'] });
    for (let i = 0; i < 3; i += 1) expect((await whoami(BAD, '127.0.0.1', '192.0.2.66')).status).toBe(401);
    expect((await whoami(BAD, '127.0.0.1', '192.0.2.66')).status).toBe(429);
    // Whatever the client puts left of the address its proxy adds changes nothing.
    expect((await whoami(BAD, '127.0.0.1', '192.0.2.1, 192.0.2.66')).status).toBe(429);
    expect((await whoami(BAD, '127.0.0.1', 'garbage, 192.0.2.66')).status).toBe(429);
    // Over a WebSocket too.
    const locked = await TestSocket.open(w.server.wsUrl, {
      localAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '192.0.2.66' },
    });
    locked.send({ type: 'client.auth', token: BAD });
    expect(await locked.next()).toMatchObject({ type: 'error', error: { code: 'rate_limited' } });
    // Every other client behind the same proxy signs in, over HTTP and WebSocket, and fails with a plain 401.
    expect((await whoami(w.tokens.alice!, '127.0.0.1', '192.0.2.77')).status).toBe(200);
    expect((await whoami(BAD, '127.0.0.1', '192.0.2.78')).status).toBe(401);
    const other = await TestSocket.open(w.server.wsUrl, {
      localAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '192.0.2.79' },
    });
    other.send({ type: 'client.auth', token: w.tokens.alice! });
    expect(await other.next()).toMatchObject({ type: 'server.ready' });
    // The proxy's own requests (no header) and a malformed header count as the proxy, which has its own budget.
    expect((await whoami(BAD, '127.0.0.1')).status).toBe(401);
    expect((await whoami(BAD, '127.0.0.1', '192.0.2.66:4711')).status).toBe(401);
    expect((await whoami(BAD, '127.0.0.1', '192.0.2.66, not-an-address')).status).toBe(401);
    expect((await whoami(BAD, '127.0.0.1', '')).status).toBe(429);
  });

  it("from a trusted proxy is counted against the connection cap of the client its upgrade or request names, not the proxy's, while the cap in all stays", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    w = await startTestWorld(['alice'], {
      logger: pino({ level: 'warn' }, sink),
      trustedProxies: ['127.0.0.1'],
      connections: { maxPerAddress: 4, maxConnections: 30 },
      ws: { authTimeoutMs: 60_000 },
    });
    // The proxy's own connections are not capped per address when they open (they carry many clients).
    const idle = await Promise.all(Array.from({ length: 8 }, () => silent('127.0.0.1')));
    // A keep-alive connection the proxy sent one request of the client on, answered and now idle, is the proxy's again.
    const keptAlive = await silent('127.0.0.1');
    sockets.at(-1)!.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.66\r\n\r\n');
    for (let waited = 0; waited < 2_000 && !keptAlive.said().includes('"ok":true'); waited += 20)
      await new Promise((r) => setTimeout(r, 20));
    expect(keptAlive.said()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Keep-Alive/);
    const held = await Promise.all(Array.from({ length: 4 }, () => upgrade('127.0.0.1', '192.0.2.66')));
    expect(held.map((h) => h.status)).toEqual(held.map(() => 'HTTP/1.1 101 Switching Protocols'));
    // The fifth from that client, an upgrade or a request, is refused; the proxy and everyone behind it are not.
    const fifth = await upgrade('127.0.0.1', '192.0.2.66');
    expect(fifth.status).toBe('HTTP/1.1 429 Too Many Requests');
    expect(fifth.said).toContain('too many open connections: 192.0.2.66 holds 4 connections');
    const request = await whoami(w.tokens.alice!, '127.0.0.1', '192.0.2.66');
    expect(request.status).toBe(429);
    expect(request.headers['retry-after']).toBe('5');
    expect(request.body.error.message).toBe(
      'too many open connections: 192.0.2.66 holds 4 connections; close some and try again',
    );
    expect((await upgrade('127.0.0.1', '192.0.2.77')).status).toBe('HTTP/1.1 101 Switching Protocols');
    expect((await whoami(w.tokens.alice!, '127.0.0.1', '192.0.2.78')).status).toBe(200);
    expect((await whoami(w.tokens.alice!, '127.0.0.1')).status).toBe(200);
    expect(idle.map((s) => s.said())).toEqual(idle.map(() => ''));
    // The log names the client, and the proxy it came through.
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        address: '192.0.2.66',
        proxy: '127.0.0.1',
        msg: expect.stringMatching(/^connection refused: 192\.0\.2\.66 holds 4 connections$/),
      }),
    );
    // A client's count goes down when its connection closes.
    held[0]!.socket.destroy();
    let again = '';
    for (let attempt = 0; attempt < 20 && again !== 'HTTP/1.1 101 Switching Protocols'; attempt += 1) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 100));
      again = (await upgrade('127.0.0.1', '192.0.2.66')).status;
    }
    expect(again).toBe('HTTP/1.1 101 Switching Protocols');
    // The cap in all still counts every connection, the proxy's too: past 30 open, new ones are refused.
    const more = await Promise.all(Array.from({ length: 20 }, () => silent('127.0.0.1')));
    const refusedInAll = (): number =>
      more.filter((s) => s.said().includes('too many open connections: the server holds 30 connections')).length;
    for (let waited = 0; waited < 2_000 && refusedInAll() === 0; waited += 50)
      await new Promise((r) => setTimeout(r, 50));
    expect(refusedInAll()).toBeGreaterThan(0);
  });
});
