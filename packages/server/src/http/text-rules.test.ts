import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../test/support/test-postgres.js';
import { runCli } from '../testing/cli-process.js';
import { httpCall } from '../testing/test-client.js';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { TestSocket } from '../ws/ws-test-client.js';

/**
 * protocol.md's Text rule, on both stores: a NUL or a lone surrogate anywhere in what a request
 * carries is 400 `invalid_request` naming where it is, and nothing lands. The bodies are raw JSON
 * text, so the `\u0000` and `\ud800` escapes are what the server parses.
 */
const NUL = String.raw`\u0000`;
const LONE = String.raw`\ud800`;

describe.each(['sqlite', 'postgres'] as const)('text rules on %s', (store) => {
  let db: TestDatabase | undefined;
  let w: TestWorld;
  let t: string;
  beforeAll(async () => {
    db = store === 'postgres' ? await freshDatabase('text_rules') : undefined;
    w = await startTestWorld(['alice'], db === undefined ? {} : { database: db.url });
    t = await w.thread('alice', { title: 'Plain' });
    await w.bot('alice', 'helper');
  });
  afterAll(async () => {
    await w?.stop();
    await db?.drop();
  });

  const events = () => `/v1/threads/${t}/events`;
  const table: Array<[string, () => { method: string; path: string; rawBody?: string }, string]> = [
    ['a NUL in a title', () => ({ method: 'POST', path: '/v1/threads', rawBody: `{"title":"a${NUL}b"}` }), 'title'],
    [
      'a lone surrogate in a title',
      () => ({ method: 'POST', path: '/v1/threads', rawBody: `{"title":"a${LONE}b"}` }),
      'title',
    ],
    [
      "a NUL in a new bot's displayName",
      () => ({
        method: 'POST',
        path: '/v1/principals',
        rawBody: `{"principalId":"bot-x","kind":"bot","displayName":"B${NUL}t"}`,
      }),
      'displayName',
    ],
    [
      'a NUL in a renamed displayName',
      () => ({ method: 'PATCH', path: '/v1/principals/helper', rawBody: `{"displayName":"He${NUL}lper"}` }),
      'displayName',
    ],
    [
      'a NUL in an event data value',
      () => ({ method: 'POST', path: events(), rawBody: `{"type":"acme.note","data":{"text":"x${NUL}"}}` }),
      'data.text',
    ],
    [
      'a NUL in an event data key',
      () => ({ method: 'POST', path: events(), rawBody: `{"type":"acme.note","data":{"k${NUL}":1}}` }),
      `data."k${NUL}"`,
    ],
    [
      'a lone low surrogate in an event data key',
      () => ({ method: 'POST', path: events(), rawBody: String.raw`{"type":"acme.note","data":{"\udc00":1}}` }),
      String.raw`data."\udc00"`,
    ],
    [
      'a NUL deep in nested arrays',
      () => ({
        method: 'POST',
        path: events(),
        rawBody: `{"type":"acme.note","data":{"a":[1,[{"b":[true,"${NUL}"]}]]}}`,
      }),
      'data.a.1.0.b.1',
    ],
    [
      'a lone surrogate in the second event of a batch',
      () => ({
        method: 'POST',
        path: events(),
        rawBody: `{"events":[{"type":"acme.x","data":{}},{"type":"acme.x","data":{"t":"${LONE}"}}]}`,
      }),
      'events.1.data.t',
    ],
    [
      'a NUL in an event type',
      () => ({ method: 'POST', path: events(), rawBody: `{"type":"acme.${NUL}","data":{}}` }),
      'type',
    ],
    [
      'a NUL in a clientEventId',
      () => ({ method: 'POST', path: events(), rawBody: `{"type":"acme.x","data":{},"clientEventId":"c${NUL}"}` }),
      'clientEventId',
    ],
    [
      "a NUL in an artifact's content",
      () => ({
        method: 'PUT',
        path: `/v1/threads/${t}/artifacts/notes.md`,
        rawBody: `{"content":"x${NUL}","mediaType":"text/markdown"}`,
      }),
      'content',
    ],
    ['a NUL in a query parameter', () => ({ method: 'GET', path: '/v1/principals?query=a%00' }), 'query.query'],
    ['a NUL in a path parameter', () => ({ method: 'GET', path: '/v1/threads/th_%00' }), 'path.id'],
  ];

  it.each(table)('answers %s with 400 naming where it is, and nothing lands', async (_name, make, field) => {
    const { method, path, rawBody } = make();
    const res = await httpCall(w.server.url, method, path, {
      token: w.tokens.alice,
      ...(rawBody === undefined ? {} : { rawBody }),
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details.field).toBe(field);
    // A path or query parameter is named by its name in the message (`path parameter id`).
    expect(res.body.error.message).toContain(field.replace(/^(path|query)\./, ''));
    // Nothing landed, and the server still serves everyone.
    const thread = await w.as.alice!.get(`/v1/threads/${t}`);
    expect(thread.body.thread).toMatchObject({ headSeq: 1, title: 'Plain' });
    expect((await w.as.alice!.get('/v1/threads')).body.threads).toHaveLength(1);
    expect((await w.as.alice!.get('/v1/principals/bot-x')).status).toBe(404);
    expect((await w.as.alice!.get('/v1/principals/helper')).body.principal.displayName).toBe('helper');
    expect((await w.as.alice!.get(`/v1/threads/${t}/artifacts`)).body.artifacts).toEqual([]);
  });

  it('refuses a NUL in a WebSocket frame with invalid_request naming the field, and keeps the socket', async () => {
    const { socket } = await TestSocket.authenticated(w.server.wsUrl, w.tokens.alice!);
    try {
      socket.send(`{"type":"subscribe","id":"s1","threadId":"th_${NUL}"}`);
      const refused = await socket.next();
      expect(refused).toMatchObject({ type: 'error', id: 's1', error: { code: 'invalid_request' } });
      expect((refused.error as { details: { field: string } }).details.field).toBe('threadId');
      socket.send({ type: 'subscribe', id: 's2', threadId: t });
      expect(await socket.next((f) => f.type === 'subscribed')).toMatchObject({ id: 's2' });
    } finally {
      socket.ws.close();
    }
  });

  it('keeps serving appends quickly while someone sends NULs', async () => {
    // On PostgreSQL a NUL used to fail the whole group commit it was in, and every job of that
    // group then ran again alone: the others' appends waited for that.
    const bad = Array.from({ length: 20 }, () =>
      httpCall(w.server.url, 'POST', events(), {
        token: w.tokens.alice,
        rawBody: `{"type":"acme.note","data":{"text":"${NUL}"}}`,
      }),
    );
    const good = Array.from({ length: 20 }, (_, i) => w.as.alice!.post(events(), { type: 'acme.note', data: { i } }));
    const answers = await Promise.all([...bad, ...good]);
    expect(answers.slice(0, 20).map((r) => r.status)).toEqual(Array(20).fill(400));
    expect(answers.slice(20).map((r) => r.status)).toEqual(Array(20).fill(201));
    const read = await w.as.alice!.get(`/v1/threads/${t}/events?after=1`);
    expect(
      read.body.events.map((e: { data: { i: number } }) => e.data.i).sort((a: number, b: number) => a - b),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('accepts every other character, a pair of surrogates and U+FFFF included', async () => {
    const text = 'ü 李 😀 \uffff \u0001';
    const res = await w.as.alice!.post(events(), { type: 'acme.note', data: { [text]: text } });
    expect(res.status).toBe(201);
    expect(res.body.events[0].data).toEqual({ [text]: text });
  });

  it('leaves a store whose export imports into the other kind of store', async () => {
    // What used to be stored on SQLite (a NUL in a title) made `import --database` fail; now nothing such lands.
    const file = join(w.server.dataDir, 'dump.jsonl');
    const source = db === undefined ? ['--data', w.server.dataDir] : ['--database', db.url];
    const exported = JSON.parse((await runCli(['export', ...source, '--file', file])).stdout);
    const target = db === undefined ? await freshDatabase('text_rules_import') : undefined;
    const targetDir = target === undefined ? await mkdtemp(join(tmpdir(), 'bubble-text-import-')) : undefined;
    try {
      const into = target !== undefined ? ['--database', target.url] : ['--data', targetDir as string];
      const imported = JSON.parse((await runCli(['import', ...into, '--file', file])).stdout);
      expect(exported.exported.events).toBeGreaterThan(0);
      expect(imported).toEqual({ imported: exported.exported });
    } finally {
      await target?.drop();
      if (targetDir !== undefined) await rm(targetDir, { recursive: true, force: true });
    }
  });
});
