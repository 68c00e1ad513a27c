import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { client } from '../testing/test-client.js';

let w: TestWorld;
let t: string;
beforeEach(async () => {
  w = await startTestWorld(['alice', 'bob', 'carol']);
  t = await w.thread('alice');
  await w.grant('alice', t, 'bob');
});
afterEach(async () => {
  await w.stop();
});

const code = (res: { body: any }) => res.body?.error?.code;
const append = (who: string, body: unknown) => w.as[who]!.post(`/v1/threads/${t}/events`, body);
const part = (runId: string, delta = 'x') => ({
  type: 'message_part',
  data: { runId, chunk: { type: 'text-delta', id: 'txt', delta } },
});

describe('append', () => {
  it('appends one event as the caller and ignores a principalId in the body', async () => {
    const res = await append('bob', {
      type: 'acme.note',
      data: { text: 'hi' },
      clientEventId: 'c-1',
      principalId: 'alice',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      events: [
        {
          id: expect.stringMatching(/^ev_/),
          threadId: t,
          seq: 3,
          type: 'acme.note',
          principalId: 'bob',
          data: { text: 'hi' },
          clientEventId: 'c-1',
          createdAt: expect.any(String),
        },
      ],
    });
    const batch = await append('bob', {
      events: [
        { type: 'acme.note', data: { n: 1 }, principalId: 'system' },
        { type: 'acme.note', data: { n: 2 } },
      ],
    });
    expect(batch.status).toBe(201);
    expect(batch.body.events.map((e: any) => [e.seq, e.principalId, e.clientEventId])).toEqual([
      [4, 'bob', null],
      [5, 'bob', null],
    ]);
  });

  it('replays a clientEventId (200 with the stored envelope) and refuses it with a different body (409)', async () => {
    const first = await append('alice', { type: 'acme.note', data: { a: 1 }, clientEventId: 'c-1' });
    const again = await append('alice', { type: 'acme.note', data: { a: 1 }, clientEventId: 'c-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const partly = await append('alice', {
      events: [
        { type: 'acme.note', data: { a: 1 }, clientEventId: 'c-1' },
        { type: 'acme.note', data: { a: 2 }, clientEventId: 'c-2' },
      ],
    });
    expect(partly.status).toBe(201);
    expect(partly.body.events.map((e: any) => e.seq)).toEqual([3, 4]);
    const other = await append('alice', { type: 'acme.note', data: { a: 9 }, clientEventId: 'c-1' });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'conflict', details: { clientEventId: 'c-1', index: 0 } });
    expect(code(await append('alice', { type: 'acme.other', data: { a: 1 }, clientEventId: 'c-1' }))).toBe('conflict');
    // another principal's clientEventId space is its own
    expect((await append('bob', { type: 'acme.note', data: { a: 9 }, clientEventId: 'c-1' })).status).toBe(201);
    expect((await w.as.alice!.get(`/v1/threads/${t}`)).body.thread.headSeq).toBe(5);
  });

  it('lands a batch atomically: one invalid event lands nothing', async () => {
    const before = (await w.as.alice!.get(`/v1/threads/${t}`)).body.thread.headSeq;
    const cases = [
      {
        events: [
          { type: 'acme.note', data: {} },
          { type: 'run_finished', data: { runId: 'r', status: 'bogus' } },
        ],
      },
      {
        events: [
          { type: 'acme.note', data: {} },
          { type: 'unknowntype', data: {} },
        ],
      },
      {
        events: [
          { type: 'acme.note', data: {} },
          { type: 'participant_added', data: { principalId: 'x', role: 'member', by: 'x' } },
        ],
      },
      {
        events: [
          { type: 'acme.note', data: {} },
          { type: 'acme.big', data: { s: 'x'.repeat(70_000) } },
        ],
      },
      {
        events: [
          part('r-1'),
          { type: 'run_started', data: { runId: 'r-1' } },
          { type: 'run_started', data: { runId: 'r-1' } },
        ],
      },
    ];
    const codes = [];
    for (const body of cases) codes.push(code(await append('alice', body)));
    expect(codes).toEqual(['invalid_request', 'invalid_request', 'forbidden', 'payload_too_large', 'conflict']);
    expect((await w.as.alice!.get(`/v1/threads/${t}`)).body.thread.headSeq).toBe(before);
    // the run of the refused batch was not claimed
    expect((await append('bob', { type: 'run_started', data: { runId: 'r-1' } })).status).toBe(201);
  });

  it('enforces run ownership (403) and open-once/close-once (409)', async () => {
    expect((await append('alice', { type: 'run_started', data: { runId: 'r1', replyTo: [1] } })).status).toBe(201);
    expect(code(await append('bob', part('r1')))).toBe('forbidden');
    expect(code(await append('bob', { type: 'run_finished', data: { runId: 'r1', status: 'completed' } }))).toBe(
      'forbidden',
    );
    expect(code(await append('alice', { type: 'run_started', data: { runId: 'r1' } }))).toBe('conflict');
    expect((await append('alice', part('r1'))).status).toBe(201);
    expect(
      (await append('bob', { type: 'run_interrupt_requested', data: { runId: 'r1', reason: 'stop' } })).status,
    ).toBe(201);
    expect((await append('alice', { type: 'run_finished', data: { runId: 'r1', status: 'interrupted' } })).status).toBe(
      201,
    );
    expect(code(await append('alice', part('r1')))).toBe('conflict');
    expect(code(await append('alice', { type: 'run_finished', data: { runId: 'r1', status: 'completed' } }))).toBe(
      'conflict',
    );
    // a bare-delta run
    expect((await append('bob', part('r2'))).status).toBe(201);
    expect(code(await append('alice', part('r2')))).toBe('forbidden');
  });

  it('validates known types, accepts dotted custom types, refuses system-only types', async () => {
    const ok = [
      { type: 'tool_call_approval', data: { toolCallId: 'tc', decision: 'allow' } },
      { type: 'tool_call_result', data: { toolCallId: 'tc', output: { x: 1 }, isError: false } },
      { type: 'acme.poll_created', data: { q: 'lunch?' } },
      // "accepted if their name contains a dot": nothing more is asked of the name
      { type: 'acme.x:y', data: {} },
      { type: 'acme/x.y', data: {} },
      { type: '.acme', data: {} },
      { type: 'acme.', data: {} },
      { type: 'acme.ü b', data: {} },
      {
        type: 'message_part',
        data: {
          runId: 'r9',
          chunk: {
            type: 'tool-input-available',
            toolCallId: 'tc',
            toolName: 'Task',
            input: {},
            providerMetadata: { bubble: { childThreadId: `${t}.sub-abcde-123` } },
          },
        },
      },
    ];
    for (const body of ok) expect((await append('alice', body)).status, body.type).toBe(201);
    const bad: Array<[unknown, string]> = [
      [{ type: 'tool_call_approval', data: { toolCallId: 'tc', decision: 'maybe' } }, 'invalid_request'],
      [{ type: 'message_part', data: { runId: 'r9', chunk: { type: 'text-delta', id: 'a' } } }, 'invalid_request'],
      [{ type: 'poll_created', data: {} }, 'invalid_request'],
      [{ type: 'acme.list', data: [1, 2] }, 'invalid_request'],
      [
        { type: 'artifact_updated', data: { name: 'a', version: 1, mediaType: 'text/plain', by: 'alice' } },
        'forbidden',
      ],
      [{ type: 'participant_removed', data: { principalId: 'bob', role: 'member', by: 'alice' } }, 'forbidden'],
    ];
    for (const [body, expected] of bad) expect(code(await append('alice', body)), JSON.stringify(body)).toBe(expected);
  });

  it('takes agent_settings and context_reset from participants, requestedBy only from the bot they target', async () => {
    await w.bot('alice', 'bot-a');
    await w.grant('alice', t, 'bot-a');
    const asked = await append('bob', { type: 'agent_settings', data: { target: 'bot-a', permissionMode: 'plan' } });
    expect(asked.status).toBe(201);
    expect(asked.body.events[0]).toMatchObject({
      principalId: 'bob',
      data: { target: 'bot-a', permissionMode: 'plan' },
    });
    expect((await append('bob', { type: 'context_reset', data: { target: 'bot-a' } })).status).toBe(201);
    // The bot records a person's chat command (`/model opus`) with that person as requestedBy.
    const recorded = await append('bot-a', {
      events: [
        { type: 'agent_settings', data: { target: 'bot-a', model: 'opus', requestedBy: 'bob' } },
        { type: 'context_reset', data: { target: 'bot-a', requestedBy: 'bob' } },
      ],
    });
    expect(recorded.status).toBe(201);
    // Nobody else may put words in someone's mouth: not a person, not another bot.
    await w.bot('alice', 'bot-b');
    await w.grant('alice', t, 'bot-b');
    for (const [who, type] of [
      ['bob', 'agent_settings'],
      ['bot-b', 'agent_settings'],
      ['bob', 'context_reset'],
    ] as const) {
      const res = await append(who, { type, data: { target: 'bot-a', model: 'x', requestedBy: 'alice' } });
      expect([res.status, code(res)], `${who} ${type}`).toEqual([403, 'forbidden']);
      expect(res.body.error.message).toContain('requestedBy');
    }
    const mode = await append('bob', { type: 'agent_settings', data: { target: 'bot-a', permissionMode: 'dontAsk' } });
    expect([mode.status, code(mode)]).toEqual([400, 'invalid_request']);
    expect(mode.body.error.message).toContain('permissionMode');
    const file = {
      type: 'file_added',
      data: { fileId: 'f_1', name: 'a.txt', mediaType: 'text/plain', size: 1, sha256: 'a'.repeat(64), by: 'bob' },
    };
    expect(code(await append('bob', file))).toBe('forbidden');
  });

  it('reads a null clientEventId as none, as stored envelopes show it', async () => {
    const res = await append('alice', { type: 'acme.note', data: { a: 1 }, clientEventId: null });
    expect(res.status).toBe(201);
    expect(res.body.events[0]).toMatchObject({ seq: 3, clientEventId: null });
    const batch = await append('alice', {
      events: [
        { type: 'acme.note', data: {}, clientEventId: null },
        { type: 'acme.note', data: {}, clientEventId: null },
      ],
    });
    expect(batch.body.events.map((e: any) => e.seq)).toEqual([4, 5]);
  });

  it('takes data nested up to 100 levels (the body counts as one) and refuses one level more', async () => {
    const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) });
    expect((await append('alice', { type: 'acme.deep', data: nested(99) })).status).toBe(201);
    const deeper = await append('alice', { type: 'acme.deep', data: nested(100) });
    expect(deeper.status).toBe(400);
    expect(deeper.body.error.message).toMatch(/more than 100 levels deep/);
  });

  it('needs a live grant: strangers 403, unknown threads 404', async () => {
    expect(code(await append('carol', { type: 'acme.note', data: {} }))).toBe('forbidden');
    expect(code(await w.as.carol!.post('/v1/threads/th_nothere/events', { type: 'acme.note', data: {} }))).toBe(
      'not_found',
    );
  });

  it('gives several concurrent clients seqs 1..N with no gap and no duplicate', async () => {
    const writers = ['alice', 'bob'];
    for (let i = 0; i < 4; i += 1) writers.push(`bot-${i}`);
    for (let i = 0; i < 4; i += 1) {
      await w.bot('alice', `bot-${i}`);
      await w.grant('alice', t, `bot-${i}`);
    }
    const head = (await w.as.alice!.get(`/v1/threads/${t}`)).body.thread.headSeq as number;
    const perWriter = 40;
    const results = await Promise.all(
      writers.map(async (who) => {
        const got: number[] = [];
        await Promise.all(
          Array.from({ length: perWriter }, async (_, i) => {
            const res = await append(who, { type: 'acme.note', data: { who, i }, clientEventId: `${who}-${i}` });
            expect(res.status).toBe(201);
            got.push(res.body.events[0].seq);
          }),
        );
        return got;
      }),
    );
    const all = results.flat().sort((a, b) => a - b);
    const n = writers.length * perWriter;
    expect(all).toEqual(Array.from({ length: n }, (_, i) => head + 1 + i));
    const read = await w.as.alice!.get(`/v1/threads/${t}/events?after=0&limit=1000`);
    expect(read.body.events.map((e: any) => e.seq)).toEqual(Array.from({ length: head + n }, (_, i) => i + 1));
    expect(read.body.headSeq).toBe(head + n);
  });
});

describe('read', () => {
  beforeEach(async () => {
    await append('alice', { events: Array.from({ length: 18 }, (_, i) => ({ type: 'acme.note', data: { i } })) });
  });
  const seqs = (res: { body: any }) => res.body.events.map((e: any) => e.seq);

  it('reads after a seq, before a seq, with limits, ascending', async () => {
    const reader = w.as.bob!;
    const all = await reader.get(`/v1/threads/${t}/events`);
    expect(all.status).toBe(200);
    expect(seqs(all)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(all.body.headSeq).toBe(20);
    expect(seqs(await reader.get(`/v1/threads/${t}/events?after=15`))).toEqual([16, 17, 18, 19, 20]);
    expect(seqs(await reader.get(`/v1/threads/${t}/events?after=2&limit=3`))).toEqual([3, 4, 5]);
    expect(seqs(await reader.get(`/v1/threads/${t}/events?before=10&limit=3`))).toEqual([7, 8, 9]);
    expect(seqs(await reader.get(`/v1/threads/${t}/events?before=3`))).toEqual([1, 2]);
    expect(seqs(await reader.get(`/v1/threads/${t}/events?after=20`))).toEqual([]);
  });

  it('defaults limit to 100 and allows at most 1000', async () => {
    await append('alice', { events: Array.from({ length: 150 }, (_, i) => ({ type: 'acme.note', data: { i } })) });
    expect(seqs(await w.as.bob!.get(`/v1/threads/${t}/events`))).toHaveLength(100);
    expect(seqs(await w.as.bob!.get(`/v1/threads/${t}/events?limit=1000`))).toHaveLength(170);
  });

  it.each([['after=-1'], ['after=abc'], ['after=1.5'], ['limit=0'], ['limit=1001'], ['limit='], ['after=1&before=5']])(
    'answers 400 for the query %s',
    async (query) => {
      const res = await w.as.bob!.get(`/v1/threads/${t}/events?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    },
  );

  it('needs read access', async () => {
    expect(code(await w.as.carol!.get(`/v1/threads/${t}/events`))).toBe('forbidden');
    expect(code(await w.as.carol!.get('/v1/threads/th_nothere/events'))).toBe('not_found');
    expect((await client(w.server.url).get(`/v1/threads/${t}/events`)).status).toBe(401);
  });
});

describe('cursor', () => {
  it('stores a forward-only cursor per principal and thread', async () => {
    const bob = w.as.bob!;
    expect((await bob.get(`/v1/threads/${t}/cursor`)).body).toEqual({ seq: 0 });
    expect((await bob.put(`/v1/threads/${t}/cursor`, { seq: 2 })).body).toEqual({ seq: 2 });
    expect((await bob.put(`/v1/threads/${t}/cursor`, { seq: 1 })).body).toEqual({ seq: 2 });
    expect((await bob.get(`/v1/threads/${t}/cursor`)).body).toEqual({ seq: 2 });
    expect((await w.as.alice!.get(`/v1/threads/${t}/cursor`)).body).toEqual({ seq: 0 });
    expect(code(await bob.put(`/v1/threads/${t}/cursor`, { seq: 99 }))).toBe('invalid_request');
    expect(code(await bob.put(`/v1/threads/${t}/cursor`, { seq: -1 }))).toBe('invalid_request');
    expect(code(await bob.put(`/v1/threads/${t}/cursor`, { seq: '2' }))).toBe('invalid_request');
    expect(code(await w.as.carol!.put(`/v1/threads/${t}/cursor`, { seq: 1 }))).toBe('forbidden');
    expect(code(await w.as.carol!.get(`/v1/threads/${t}/cursor`))).toBe('forbidden');
  });
});
