import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestWorld, type TestWorld } from './testing/test-world.js';
import { httpCall } from './testing/test-client.js';

let w: TestWorld | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
});

describe('createBubbleServer', () => {
  it('loses nothing across a restart on the same data folder and continues the seqs', async () => {
    w = await startTestWorld(['alice', 'bob']);
    const bot = await w.bot('alice', 'bot-a');
    const t = await w.thread('alice', { title: 'kept', key: 'k' });
    await w.grant('alice', t, 'bob');
    await w.as.alice!.post(`/v1/threads/${t}/events`, {
      events: [
        { type: 'acme.note', data: { n: 1 }, clientEventId: 'c-1' },
        { type: 'run_started', data: { runId: 'r1' } },
      ],
    });
    await w.as.bob!.put(`/v1/threads/${t}/cursor`, { seq: 3 });
    await w.as.alice!.put(`/v1/threads/${t}/artifacts/doc`, { content: 'v1', mediaType: 'text/plain' });
    const before = (await w.as.alice!.get(`/v1/threads/${t}/events`)).body;
    const url = w.server.url;

    await w.server.restart();
    expect(w.server.url).toBe(url);

    expect((await w.as.alice!.get(`/v1/threads/${t}/events`)).body).toEqual(before);
    expect((await bot.get('/v1/auth/whoami')).body.principal.ownerPrincipalIds).toEqual(['alice']);
    expect((await w.as.bob!.get(`/v1/threads/${t}/cursor`)).body).toEqual({ seq: 3 });
    expect((await w.as.bob!.get('/v1/grants')).body.grants.map((g: any) => g.threadId)).toEqual([t]);
    expect((await w.as.alice!.get(`/v1/threads/${t}/artifacts/doc`)).body.artifact.content).toBe('v1');
    expect((await w.as.alice!.post('/v1/threads', { key: 'k' })).status).toBe(200);
    expect(
      (
        await w.as.alice!.post(`/v1/threads/${t}/events`, {
          type: 'acme.note',
          data: { n: 1 },
          clientEventId: 'c-1',
        })
      ).status,
    ).toBe(200);
    expect(
      (await w.as.alice!.post(`/v1/threads/${t}/events`, { type: 'run_started', data: { runId: 'r1' } })).status,
    ).toBe(409);
    const next = await w.as.alice!.post(`/v1/threads/${t}/events`, { type: 'acme.note', data: { n: 2 } });
    expect(next.body.events[0].seq).toBe(before.headSeq + 1);
  });

  it('finishes an in-flight request on close, then refuses connections', async () => {
    w = await startTestWorld(['alice']);
    const t = await w.thread('alice');
    const server = w.server.server;
    // A request whose body arrives in two parts; the server is told to close between them.
    let closing: Promise<void> | undefined;
    const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(
        `${server.url}/v1/threads/${t}/events`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${w!.tokens.alice}`,
            'content-type': 'application/json',
            'transfer-encoding': 'chunked',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      server.httpServer.once('request', () => {
        closing = server.close();
        setImmediate(() => req.end('"data": {"late": true}}'));
      });
      req.write('{"type": "acme.note", ');
    });
    const res = await answer;
    expect(res.status).toBe(201);
    expect(res.body.events[0]).toMatchObject({ seq: 2, data: { late: true } });
    expect(closing).toBeDefined();
    await closing;
    await expect(httpCall(server.url, 'GET', '/healthz')).rejects.toThrow();
    // The event was committed before the database closed.
    const dataDir = w.server.dataDir;
    await w.server.restart();
    expect(w.server.dataDir).toBe(dataDir);
    expect((await w.as.alice!.get(`/v1/threads/${t}`)).body.thread.headSeq).toBe(2);
  });
});
