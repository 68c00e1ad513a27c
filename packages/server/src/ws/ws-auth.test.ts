import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { mintTokenSecret } from '../domain/tokens.js';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { TestSocket } from './ws-test-client.js';

let server: TestServer;
let token: string;

beforeEach(async () => {
  server = await startTestServer({ ws: { authTimeoutMs: 300 } });
  token = (await server.createHuman('alice', 'Alice')).token.token;
});

afterEach(async () => {
  await server.stop();
});

describe('authentication', () => {
  it('answers client.auth with server.ready carrying the principal', async () => {
    const { socket, ready } = await TestSocket.authenticated(server.wsUrl, token);
    expect(ready).toMatchObject({
      type: 'server.ready',
      principal: { principalId: 'alice', kind: 'human', displayName: 'Alice' },
    });
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('closes with 4001 on an unknown token', async () => {
    const socket = await TestSocket.open(server.wsUrl);
    // Well formed, minted the way real tokens are, but never stored.
    socket.send({ type: 'client.auth', token: mintTokenSecret('human') });
    expect((await socket.closed).code).toBe(4001);
    expect(socket.pending()).toEqual([]);
  });

  it('closes with 4001 when client.auth does not come in time', async () => {
    const socket = await TestSocket.open(server.wsUrl);
    expect((await socket.closed).code).toBe(4001);
  });

  it('closes with 4001 on a second client.auth', async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    socket.send({ type: 'client.auth', token });
    expect((await socket.closed).code).toBe(4001);
  });

  it.each([
    ['a ping', JSON.stringify({ type: 'ping' })],
    ['a subscribe', JSON.stringify({ type: 'subscribe', id: 's', threadId: 'th_x', afterSeq: 0 })],
    ['bad JSON', '{"type":'],
    ['a client.auth without token', JSON.stringify({ type: 'client.auth' })],
  ])('closes with 4001 when the first frame is %s', async (_name, frame) => {
    const socket = await TestSocket.open(server.wsUrl);
    socket.send(frame);
    expect((await socket.closed).code).toBe(4001);
    expect(socket.pending()).toEqual([]);
  });

  it('handles frames sent right behind client.auth, after server.ready', async () => {
    const socket = await TestSocket.open(server.wsUrl);
    socket.send({ type: 'client.auth', token });
    socket.send({ type: 'ping' });
    expect((await socket.next()).type).toBe('server.ready');
    expect((await socket.next()).type).toBe('pong');
    socket.close();
  });
});

describe('frames', () => {
  it('answers ping with pong', async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    socket.send({ type: 'ping' });
    expect(await socket.next()).toEqual({ type: 'pong' });
    socket.close();
  });

  const malformed: Array<[string, string | Buffer, string | undefined]> = [
    ['bad JSON', '{"type":"ping"', undefined],
    ['a JSON array', '[]', undefined],
    ['a JSON string', '"ping"', undefined],
    ['null', 'null', undefined],
    ['an object without type', '{"id":"x"}', 'x'],
    ['an unknown type', '{"type":"launch","id":"x"}', 'x'],
    ['a subscribe without threadId', '{"type":"subscribe","id":"s1","afterSeq":0}', 's1'],
    ['a subscribe with a negative afterSeq', '{"type":"subscribe","id":"s1","threadId":"th_x","afterSeq":-3}', 's1'],
    ['a subscribe with a string afterSeq', '{"type":"subscribe","id":"s1","threadId":"th_x","afterSeq":"4"}', 's1'],
    ['a subscribe without id', '{"type":"subscribe","threadId":"th_x","afterSeq":0}', undefined],
    ['a subscribe_grants with a numeric id', '{"type":"subscribe_grants","id":7}', undefined],
    ['an unsubscribe without id', '{"type":"unsubscribe"}', undefined],
    ['a binary frame', Buffer.from([1, 2, 3]), undefined],
  ];

  it.each(malformed)('answers %s with an error frame and keeps serving', async (_name, frame, id) => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    if (typeof frame === 'string') socket.send(frame);
    else socket.ws.send(frame, { binary: true });
    const error = await socket.next();
    expect(error).toMatchObject({ type: 'error', error: { code: 'invalid_request' } });
    expect(typeof (error.error as { message: unknown }).message).toBe('string');
    expect((error.error as { details: unknown }).details).toBeTypeOf('object');
    expect(error.id).toBe(id);
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('survives every malformed frame in a row on one socket, and the server keeps serving others', async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    for (const [, frame] of malformed) {
      if (typeof frame === 'string') socket.send(frame);
      else socket.ws.send(frame, { binary: true });
    }
    const before = await socket.roundTrip();
    expect(before).toHaveLength(malformed.length);
    expect(before.every((frame) => frame.type === 'error')).toBe(true);
    const other = await TestSocket.authenticated(server.wsUrl, token);
    expect(await other.socket.roundTrip()).toEqual([]);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    socket.close();
    other.socket.close();
  });

  it('keeps serving through 300 random frames (seeded), answering each one that is not a valid request with an error', async () => {
    let state = 0x2545f491;
    const random = (): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 0x100000000;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const values: unknown[] = [
      null,
      true,
      0,
      -1,
      1.5,
      2 ** 60,
      '',
      'x',
      's1',
      'th_nope',
      [],
      {},
      { a: 1 },
      '\u0000',
      'é',
    ];
    const types = ['subscribe', 'subscribe_grants', 'unsubscribe', 'nope', '', 7, null]; // no ping: the round trip's pong must be ours
    const frames: string[] = [];
    for (let i = 0; i < 300; i += 1) {
      const frame: Record<string, unknown> = {};
      if (random() < 0.9) frame.type = pick(types);
      for (const key of ['id', 'threadId', 'afterSeq', 'token', 'extra']) if (random() < 0.5) frame[key] = pick(values);
      const text = JSON.stringify(frame);
      frames.push(random() < 0.1 ? text.slice(0, Math.floor(random() * text.length)) : text);
    }
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    for (const frame of frames) socket.send(frame);
    const answers = await socket.roundTrip(20_000);
    const allowed = new Set(['error', 'subscribed', 'grants_synced', 'grant', 'subscription_ended']);
    expect(answers.filter((frame) => !allowed.has(frame.type))).toEqual([]);
    expect(answers.filter((frame) => frame.type === 'error').length).toBeGreaterThan(100);
    expect(socket.ws.readyState).toBe(WebSocket.OPEN);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    socket.close();
  });

  it('closes with 1009 on a frame over 1 MiB', async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    socket.send(JSON.stringify({ type: 'ping', pad: 'x'.repeat(1024 * 1024) }));
    expect((await socket.closed).code).toBe(1009);
    const other = await TestSocket.authenticated(server.wsUrl, token);
    expect(await other.socket.roundTrip()).toEqual([]);
    other.socket.close();
  });

  it('accepts a frame of exactly 1 MiB', async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    const head = '{"type":"ping","pad":"';
    const tail = '"}';
    socket.send(head + 'x'.repeat(1024 * 1024 - head.length - tail.length) + tail);
    expect(await socket.next()).toEqual({ type: 'pong' });
    socket.close();
  });
});

describe('shutdown', () => {
  it('closes every socket with 1001, authenticated or not', async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, token);
    const fresh = await TestSocket.open(server.wsUrl);
    await server.stop();
    expect((await socket.closed).code).toBe(1001);
    expect((await fresh.closed).code).toBe(1001);
  });

  it('refuses upgrades on other paths', async () => {
    const ws = new WebSocket(server.wsUrl.replace('/v1/ws', '/v1/other'));
    const status = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => resolve(-1));
    });
    expect(status).toBe(404);
  });
});
