import { connect } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@bubble/protocol';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { httpCall } from '../testing/test-client.js';

let w: TestWorld;
let t: string;
beforeAll(async () => {
  w = await startTestWorld(['alice']);
  t = await w.thread('alice');
});
afterAll(async () => {
  await w.stop();
});

const events = () => `/v1/threads/${t}/events`;
const big = (bytes: number) => JSON.stringify({ type: 'acme.note', data: { s: 'x'.repeat(bytes) } });

/** After every bad request the server still answers, and nothing landed. */
async function expectStillServing(): Promise<void> {
  const health = await httpCall(w.server.url, 'GET', '/healthz');
  expect(health.status).toBe(200);
  const ok = await httpCall(w.server.url, 'GET', `/v1/threads/${t}`, { token: w.tokens.alice });
  expect(ok.body.thread.headSeq).toBe(1);
}

describe('malformed input', () => {
  const table: Array<
    [
      string,
      () => { method: string; path: string; rawBody?: string | Buffer; headers?: Record<string, string> },
      number,
      string,
      RegExp?,
    ]
  > = [
    [
      'invalid JSON',
      () => ({ method: 'POST', path: events(), rawBody: '{"type": "acme.note", ' }),
      400,
      'invalid_request',
    ],
    ['an empty body', () => ({ method: 'POST', path: events(), rawBody: '' }), 400, 'invalid_request'],
    ['a JSON array', () => ({ method: 'POST', path: events(), rawBody: '[1,2]' }), 400, 'invalid_request'],
    ['a JSON string', () => ({ method: 'POST', path: events(), rawBody: '"hi"' }), 400, 'invalid_request'],
    [
      'type of the wrong type',
      () => ({ method: 'POST', path: events(), rawBody: '{"type": 5, "data": {}}' }),
      400,
      'invalid_request',
    ],
    [
      'clientEventId of the wrong type',
      () => ({ method: 'POST', path: events(), rawBody: '{"type": "acme.x", "data": {}, "clientEventId": 7}' }),
      400,
      'invalid_request',
    ],
    ['an empty batch', () => ({ method: 'POST', path: events(), rawBody: '{"events": []}' }), 400, 'invalid_request'],
    [
      'a batch of 501 events',
      () => ({
        method: 'POST',
        path: events(),
        rawBody: JSON.stringify({ events: Array.from({ length: 501 }, () => ({ type: 'acme.x', data: {} })) }),
      }),
      400,
      'invalid_request',
      /events: a batch holds at most 500 events/,
    ],
    [
      'a batch with a bad event',
      () => ({ method: 'POST', path: events(), rawBody: '{"events": [{"type": "acme.x", "data": {}}, {"data": {}}]}' }),
      400,
      'invalid_request',
      /events\.1\.type/,
    ],
    [
      'one event and a batch in one body',
      () => ({
        method: 'POST',
        path: events(),
        rawBody: '{"type": "acme.x", "data": {}, "events": [{"type": "acme.y", "data": {}}]}',
      }),
      400,
      'invalid_request',
      /not both/,
    ],
    [
      'a number JSON cannot write back (1e400 parses as Infinity)',
      () => ({
        method: 'POST',
        path: events(),
        rawBody: '{"type": "acme.x", "data": {"n": 1e400}, "clientEventId": "inf-1"}',
      }),
      400,
      'invalid_request',
      /number JSON cannot represent/,
    ],
    [
      'a string with a lone surrogate',
      () => ({ method: 'POST', path: events(), rawBody: '{"type": "acme.x", "data": {"s": "a\\ud800b"}}' }),
      400,
      'invalid_request',
      /lone UTF-16 surrogate/,
    ],
    [
      'a key with a lone surrogate',
      () => ({ method: 'POST', path: events(), rawBody: '{"type": "acme.x", "data": {"\\udc00": 1}}' }),
      400,
      'invalid_request',
      /lone UTF-16 surrogate/,
    ],
    [
      'a thread title with a lone surrogate',
      () => ({ method: 'POST', path: '/v1/threads', rawBody: '{"title": "t\\udfff"}' }),
      400,
      'invalid_request',
      /lone UTF-16 surrogate/,
    ],
    [
      'bytes that are not UTF-8',
      () => ({
        method: 'POST',
        path: events(),
        rawBody: Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      }),
      400,
      'invalid_request',
      /not valid UTF-8/,
    ],
    [
      'JSON nested 5,000 levels deep',
      () => ({
        method: 'POST',
        path: events(),
        rawBody: `{"type": "acme.x", "data": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
      }),
      400,
      'invalid_request',
      /more than 100 levels deep/,
    ],
    [
      'an unknown undotted type',
      () => ({ method: 'POST', path: events(), rawBody: '{"type": "hello", "data": {}}' }),
      400,
      'invalid_request',
    ],
    [
      'data over 64 KiB',
      () => ({ method: 'POST', path: events(), rawBody: big(LIMITS.maxEventDataBytes) }),
      413,
      'payload_too_large',
    ],
    [
      'a body over 1 MiB (declared length)',
      () => ({ method: 'POST', path: events(), rawBody: big(LIMITS.maxRequestBytes) }),
      413,
      'payload_too_large',
    ],
    [
      'a body of 8 MiB',
      () => ({ method: 'POST', path: events(), rawBody: Buffer.alloc(8 * 1024 * 1024, 'a') }),
      413,
      'payload_too_large',
    ],
    [
      'a thread title of the wrong type',
      () => ({ method: 'POST', path: '/v1/threads', rawBody: '{"title": 5}' }),
      400,
      'invalid_request',
    ],
    ['a malformed path escape', () => ({ method: 'GET', path: '/v1/threads/%E0%A4%A' }), 400, 'invalid_request'],
    [
      'a bad query parameter',
      () => ({ method: 'GET', path: `${events()}?after=x` }),
      400,
      'invalid_request',
      /after: must be a non-negative integer/,
    ],
    [
      'a hexadecimal query number',
      () => ({ method: 'GET', path: `${events()}?after=0x10` }),
      400,
      'invalid_request',
      /after: must be a non-negative integer/,
    ],
    [
      'an exponent query number',
      () => ({ method: 'GET', path: `${events()}?limit=1e2` }),
      400,
      'invalid_request',
      /limit: must be a non-negative integer/,
    ],
    [
      'a query number after a space',
      () => ({ method: 'GET', path: `${events()}?limit=%2010` }),
      400,
      'invalid_request',
      /limit: must be a non-negative integer/,
    ],
    [
      'an empty query number',
      () => ({ method: 'GET', path: `${events()}?before=` }),
      400,
      'invalid_request',
      /before: must be a non-negative integer/,
    ],
    [
      'a query parameter given twice',
      () => ({ method: 'GET', path: `${events()}?after=1&after=2` }),
      400,
      'invalid_request',
      /after is given more than once/,
    ],
    ['a limit of 1001', () => ({ method: 'GET', path: `${events()}?limit=1001` }), 400, 'invalid_request', /limit/],
    [
      'a bad principal search limit',
      () => ({ method: 'GET', path: '/v1/principals?limit=1e1' }),
      400,
      'invalid_request',
      /limit: must be a non-negative integer/,
    ],
    [
      'a bad artifact version',
      () => ({ method: 'GET', path: `/v1/threads/${t}/artifacts/notes?version=0x1` }),
      400,
      'invalid_request',
      /version: must be a non-negative integer/,
    ],
    [
      'invalid JSON to the token route',
      () => ({ method: 'POST', path: '/v1/principals/alice/tokens', rawBody: '{x' }),
      400,
      'invalid_request',
      /not valid JSON/,
    ],
    ['an unknown route', () => ({ method: 'GET', path: '/v1/nothing' }), 404, 'not_found'],
    [
      'a plain GET of the WebSocket endpoint',
      () => ({ method: 'GET', path: '/v1/ws' }),
      400,
      'invalid_request',
      /Upgrade: websocket/,
    ],
    ['an unknown method on a known path', () => ({ method: 'PATCH', path: events() }), 404, 'not_found'],
  ];

  it.each(table)('answers %s with %i %s and keeps serving', async (_name, make, status, errorCode, message) => {
    const { method, path, rawBody, headers } = make();
    const res = await httpCall(w.server.url, method, path, {
      token: w.tokens.alice,
      rawBody,
      headers,
    });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: { code: errorCode, message: expect.any(String), details: expect.any(Object) } });
    if (message !== undefined) expect(res.body.error.message).toMatch(message);
    expect(res.text).not.toMatch(/\n\s+at /);
    await expectStillServing();
  });

  it('answers an oversize chunked body with 413 without reading all of it', async () => {
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${w.server.url}${events()}`,
        { method: 'POST', headers: { authorization: `Bearer ${w.tokens.alice}`, 'transfer-encoding': 'chunked' } },
        (r) => {
          let text = '';
          r.on('data', (c) => (text += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      const pump = (): void => {
        while (sent < 24) {
          sent += 1;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).error.code).toBe('payload_too_large');
    await expectStillServing();
  });

  it('answers Expect: 100-continue with 413 at once, without inviting an oversize body', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(w.server.server.port, '127.0.0.1', () =>
        socket.write(
          `POST ${events()} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.tokens.alice}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\nExpect: 100-continue\r\n\r\n`,
        ),
      );
      let text = '';
      socket.on('data', (c) => (text += c));
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).not.toContain('100 Continue');
    expect(answer).toContain('"payload_too_large"');
    await expectStillServing();
  });

  it('invites a body within the limit after Expect: 100-continue', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(w.server.server.port, '127.0.0.1', () =>
        socket.write(
          `POST /v1/threads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.tokens.alice}\r\nConnection: close\r\n` +
            `Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`,
        ),
      );
      let text = '';
      socket.on('data', (c) => {
        text += c;
        if (text.startsWith('HTTP/1.1 100 Continue') && !text.includes('201')) socket.write('{}');
      });
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
  });

  it('answers garbage that is not HTTP with 400 and keeps serving', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(w.server.server.port, '127.0.0.1', () => socket.write('HELLO THERE\r\n\r\n'));
      let text = '';
      socket.on('data', (c) => (text += c));
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    await expectStillServing();
  });

  it('never leaks a stack trace in a 500', async () => {
    // Fault injection: the store fails one kind of call with an error that names a secret path.
    const store = w.server.server.store;
    const original = store.getThreadAccess.bind(store);
    store.getThreadAccess = async () => {
      throw new Error('disk on fire at /secret/path');
    };
    try {
      const res = await httpCall(w.server.url, 'GET', `/v1/threads/${t}`, { token: w.tokens.alice });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { code: 'internal', message: 'internal error', details: {} } });
      expect(res.text).not.toContain('secret');
    } finally {
      store.getThreadAccess = original;
    }
    await expectStillServing();
  });
});
