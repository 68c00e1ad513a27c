import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';

let w: TestWorld;
let t: string;
beforeEach(async () => {
  w = await startTestWorld(['alice', 'bob', 'carol']);
  t = await w.thread('alice');
});
afterEach(async () => {
  await w.stop();
});

const code = (res: { body: any }) => res.body?.error?.code;

describe('artifacts extension', () => {
  it('writes versions, reads the latest or a given one, lists summaries, logs artifact_updated', async () => {
    const alice = w.as.alice!;
    const v1 = await alice.put(`/v1/threads/${t}/artifacts/plan.md`, { content: '# Plan', mediaType: 'text/markdown' });
    expect(v1.status).toBe(201);
    expect(v1.body).toEqual({
      artifact: {
        name: 'plan.md',
        version: 1,
        mediaType: 'text/markdown',
        updatedBy: 'alice',
        updatedAt: expect.any(String),
        size: 6,
      },
    });
    const v2 = await alice.put(`/v1/threads/${t}/artifacts/plan.md`, {
      content: '# Plan ✓',
      mediaType: 'text/markdown',
      baseVersion: 1,
    });
    expect(v2.body.artifact.version).toBe(2);
    expect(v2.body.artifact.size).toBe(Buffer.byteLength('# Plan ✓'));
    const latest = await alice.get(`/v1/threads/${t}/artifacts/plan.md`);
    expect(latest.body.artifact).toEqual({ ...v2.body.artifact, content: '# Plan ✓' });
    expect((await alice.get(`/v1/threads/${t}/artifacts/plan.md?version=1`)).body.artifact.content).toBe('# Plan');
    expect((await alice.get(`/v1/threads/${t}/artifacts`)).body).toEqual({ artifacts: [v2.body.artifact] });
    const events = (await alice.get(`/v1/threads/${t}/events?after=1`)).body.events;
    expect(events.map((e: any) => [e.type, e.principalId, e.data])).toEqual([
      ['artifact_updated', 'system', { name: 'plan.md', version: 1, mediaType: 'text/markdown', by: 'alice' }],
      ['artifact_updated', 'system', { name: 'plan.md', version: 2, mediaType: 'text/markdown', by: 'alice' }],
    ]);
  });

  it('answers 409 for a stale baseVersion and 404 for unknown names or versions', async () => {
    const alice = w.as.alice!;
    await alice.put(`/v1/threads/${t}/artifacts/a.txt`, { content: '1', mediaType: 'text/plain' });
    await alice.put(`/v1/threads/${t}/artifacts/a.txt`, { content: '2', mediaType: 'text/plain' });
    const stale = await alice.put(`/v1/threads/${t}/artifacts/a.txt`, {
      content: '3',
      mediaType: 'text/plain',
      baseVersion: 1,
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'conflict', details: { latestVersion: 2 } });
    expect(
      code(
        await alice.put(`/v1/threads/${t}/artifacts/new.txt`, {
          content: 'x',
          mediaType: 'text/plain',
          baseVersion: 1,
        }),
      ),
    ).toBe('conflict');
    expect(
      (await alice.put(`/v1/threads/${t}/artifacts/new.txt`, { content: 'x', mediaType: 'text/plain', baseVersion: 0 }))
        .status,
    ).toBe(201);
    expect(code(await alice.get(`/v1/threads/${t}/artifacts/missing.txt`))).toBe('not_found');
    expect(code(await alice.get(`/v1/threads/${t}/artifacts/a.txt?version=3`))).toBe('not_found');
  });

  it('lets readers read and only participants write', async () => {
    const sub = (await w.as.alice!.post('/v1/threads', { parentThreadId: t })).body.thread.threadId;
    await w.grant('alice', t, 'bob');
    await w.as.alice!.put(`/v1/threads/${sub}/artifacts/doc`, { content: 'x', mediaType: 'text/plain' });
    expect((await w.as.bob!.get(`/v1/threads/${sub}/artifacts/doc`)).status).toBe(200);
    expect((await w.as.bob!.get(`/v1/threads/${sub}/artifacts`)).status).toBe(200);
    expect(
      code(await w.as.bob!.put(`/v1/threads/${sub}/artifacts/doc`, { content: 'y', mediaType: 'text/plain' })),
    ).toBe('forbidden');
    expect(code(await w.as.carol!.get(`/v1/threads/${sub}/artifacts/doc`))).toBe('forbidden');
    expect(code(await w.as.carol!.get(`/v1/threads/${t}/artifacts`))).toBe('forbidden');
    expect(
      (await w.as.bob!.put(`/v1/threads/${t}/artifacts/doc`, { content: 'y', mediaType: 'text/plain' })).status,
    ).toBe(201);
  });

  it.each([
    ['a bad name', '.hidden', { content: 'x', mediaType: 'text/plain' }],
    ['a missing mediaType', 'doc', { content: 'x' }],
    ['a bad mediaType', 'doc', { content: 'x', mediaType: 'plain' }],
    ['non-string content', 'doc', { content: 5, mediaType: 'text/plain' }],
    ['a negative baseVersion', 'doc', { content: 'x', mediaType: 'text/plain', baseVersion: -1 }],
  ])('answers 400 for %s', async (_n, name, body) => {
    expect(code(await w.as.alice!.put(`/v1/threads/${t}/artifacts/${name}`, body))).toBe('invalid_request');
  });

  it('answers 400 for a bad version query', async () => {
    expect(code(await w.as.alice!.get(`/v1/threads/${t}/artifacts/doc?version=0`))).toBe('invalid_request');
    expect(code(await w.as.alice!.get(`/v1/threads/${t}/artifacts/doc?version=x`))).toBe('invalid_request');
  });
});
