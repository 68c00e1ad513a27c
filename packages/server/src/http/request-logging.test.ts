import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';

let w: TestWorld | undefined;
afterEach(async () => {
  await w?.stop();
});

describe('request logs', () => {
  it('log every request once with its request id, principal, thread and seq, and never log a token', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    w = await startTestWorld(['alice'], { logger: pino({ level: 'info' }, sink) });
    const t = await w.thread('alice');
    const res = await w.as.alice!.post(`/v1/threads/${t}/events`, {
      events: [
        { type: 'acme.a', data: {} },
        { type: 'acme.b', data: {} },
      ],
    });
    await w.as.alice!.get(`/v1/threads/${t}/events?after=x`);
    await w.anonymous.get('/v1/auth/whoami');
    await new Promise((r) => setImmediate(r));

    const requests = lines.filter((l) => l.msg === 'request');
    const append = requests.find((l) => l.method === 'POST' && String(l.path).endsWith('/events'));
    expect(append).toMatchObject({
      reqId: res.headers['x-request-id'],
      principalId: 'alice',
      threadId: t,
      seq: [2, 3],
      status: 201,
    });
    expect(requests.find((l) => l.status === 400)).toMatchObject({ principalId: 'alice', threadId: t });
    expect(requests.find((l) => l.status === 401)).toMatchObject({ path: '/v1/auth/whoami' });
    expect(new Set(requests.map((l) => l.reqId)).size).toBe(requests.length);
    expect(JSON.stringify(lines)).not.toContain(w.tokens.alice);
  });
});
