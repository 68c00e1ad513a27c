import Anthropic from '@anthropic-ai/sdk';
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { OFFLINE_REPLY, startModelDouble, TITLE_REPLY, type ModelDouble } from './model-double.js';
import { ScriptError } from './parse-script.js';
import type { Script } from './script.js';

let double: ModelDouble | undefined;
afterEach(async () => {
  await double?.close();
  double = undefined;
});

async function start(script?: Script, maxRecorded?: number): Promise<ModelDouble> {
  double = await startModelDouble({ script, maxRecorded });
  return double;
}

function client(d: ModelDouble): Anthropic {
  return new Anthropic({ baseURL: d.url, apiKey: 'dummy', maxRetries: 0 });
}

const ask = (text: string) => ({
  model: 'claude-test-1',
  max_tokens: 1000,
  messages: [{ role: 'user' as const, content: text }],
});

async function post(
  d: ModelDouble,
  path: string,
  body: string,
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${d.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** A tiny SSE parser: returns [event, data] pairs. */
function parseSse(text: string): Array<[string, Record<string, unknown>]> {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const lines = chunk.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))!.slice(7);
      const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) as Record<string, unknown>;
      return [event, data];
    });
}

describe('the model double over HTTP', () => {
  it('streams a scripted text reply that the Anthropic client accumulates', async () => {
    const d = await start([{ match: { text: 'hello' }, reply: [{ type: 'text', text: 'Hi there, human!' }] }]);
    const stream = client(d).messages.stream(ask('well hello'));
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const message = await stream.finalMessage();
    expect(deltas).toEqual(['Hi ', 'there, ', 'human!']);
    expect(message.content).toEqual([{ type: 'text', text: 'Hi there, human!' }]);
    expect(message.model).toBe('claude-test-1');
    expect(message.stop_reason).toBe('end_turn');
    expect(message.id).toMatch(/^msg_01\w{22}$/);
    expect(d.requests).toHaveLength(1);
    expect(d.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/messages',
      kind: 'main',
      stream: true,
      lastUserText: 'well hello',
      rule: { index: 0, name: null },
      unmatched: false,
      status: 200,
      completion: 'completed',
    });
  });

  it('sends the exact SSE framing and headers of the API', async () => {
    const d = await start([{ reply: [{ type: 'text', text: 'one two' }] }]);
    const res = await post(d, '/v1/messages?beta=true', JSON.stringify({ ...ask('x'), stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('request-id')).toMatch(/^req_\w+$/);
    const events = parseSse(res.text);
    expect(events.map(([e]) => e)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const [event, data] of events) expect(data.type).toBe(event);
    expect(events[0]![1].message).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [],
      stop_reason: null,
    });
    expect(d.requests[0]!.query).toBe('?beta=true');
  });

  it('streams thinking with a signature and tool_use input as partial JSON', async () => {
    const input = {
      description: 'Count files',
      prompt: 'count the files',
      subagent_type: 'general-purpose',
      run_in_background: true,
    };
    const d = await start([
      {
        reply: [
          { type: 'thinking', thinking: 'Let me think hard.', signature: 'c2ln' },
          { type: 'text', text: 'Delegating.' },
          { type: 'tool_use', name: 'Agent', input, id: 'toolu_fixed' },
          { type: 'tool_use', name: 'mcp__bubble__post', input: { text: 'hi' } },
        ],
      },
    ]);
    const stream = client(d).messages.stream(ask('go'));
    const thinking: string[] = [];
    const signatures: string[] = [];
    stream.on('thinking', (t) => thinking.push(t));
    stream.on('streamEvent', (e) => {
      if (e.type === 'content_block_delta' && e.delta.type === 'signature_delta') signatures.push(e.delta.signature);
    });
    const message = await stream.finalMessage();
    expect(thinking.join('')).toBe('Let me think hard.');
    expect(signatures).toEqual(['c2ln']);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think hard.', signature: 'c2ln' },
      { type: 'text', text: 'Delegating.' },
      { type: 'tool_use', id: 'toolu_fixed', name: 'Agent', input },
      {
        type: 'tool_use',
        id: expect.stringMatching(/^toolu_01\w{22}$/),
        name: 'mcp__bubble__post',
        input: { text: 'hi' },
      },
    ]);
  });

  it('answers non-streaming requests with the full message', async () => {
    const d = await start([
      { reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'ls' } }], usage: { input_tokens: 42 } },
    ]);
    const message = await client(d).messages.create(ask('list'));
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-test-1',
      stop_reason: 'tool_use',
      stop_sequence: null,
      content: [{ type: 'tool_use', name: 'Bash', input: { command: 'ls' } }],
      usage: { input_tokens: 42 },
    });
    expect(d.requests[0]).toMatchObject({ stream: false, completion: 'completed', status: 200 });
  });

  it('uses each rule `times` times, then falls through; "always" never runs out', async () => {
    const d = await start([
      { name: 'twice', match: { text: 'a' }, times: 2, reply: [{ type: 'text', text: 'A' }] },
      { name: 'forever', times: 'always', reply: [{ type: 'text', text: 'Z' }] },
    ]);
    const c = client(d);
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) {
      const m = await c.messages.create(ask('a'));
      texts.push((m.content[0] as { text: string }).text);
    }
    expect(texts).toEqual(['A', 'A', 'Z', 'Z']);
    expect(d.requests.map((r) => r.rule?.name)).toEqual(['twice', 'twice', 'forever', 'forever']);
  });

  it('replies readably when no rule matches, and records it as unmatched', async () => {
    const d = await start([{ match: { text: 'expected' }, reply: [{ type: 'text', text: 'ok' }] }]);
    const m = await client(d).messages.create(ask('something else'));
    expect(m.content).toEqual([{ type: 'text', text: '[model double] no rule matched the text: "something else"' }]);
    expect(d.requests[0]).toMatchObject({ unmatched: true, rule: null });
  });

  it('without a script says plainly that it is the offline model double', async () => {
    const d = await start();
    const m = await client(d).messages.create(ask('hello?'));
    expect(m.content).toEqual([{ type: 'text', text: OFFLINE_REPLY }]);
    expect(OFFLINE_REPLY).toMatch(/offline model double/);
    expect(OFFLINE_REPLY).toMatch(/not Claude/);
    expect(d.requests[0]).toMatchObject({ unmatched: false, rule: null });
  });

  it('answers title and suggestion side requests without consuming a rule', async () => {
    const d = await start([{ reply: [{ type: 'text', text: 'the one reply' }] }]);
    const c = client(d);
    const title = await c.messages.create({
      ...ask('<session>hi</session>'),
      output_config: {
        format: { type: 'json_schema', schema: { type: 'object', properties: { title: { type: 'string' } } } },
      },
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(title.content).toEqual([{ type: 'text', text: TITLE_REPLY }]);
    expect(JSON.parse(TITLE_REPLY)).toHaveProperty('title');
    const suggestion = await c.messages.create(ask('[SUGGESTION MODE: predict]'));
    expect(suggestion.content[0]).toMatchObject({ type: 'text' });
    const main = await c.messages.create(ask('real'));
    expect(main.content).toEqual([{ type: 'text', text: 'the one reply' }]);
    expect(d.requests.map((r) => [r.kind, r.rule?.index ?? null])).toEqual([
      ['title', null],
      ['suggestion', null],
      ['main', 0],
    ]);
  });

  it('setScript replaces the script and resets use counts; invalid scripts are refused', async () => {
    const d = await start([{ reply: [{ type: 'text', text: 'first' }] }]);
    const c = client(d);
    await c.messages.create(ask('x'));
    d.setScript([{ reply: [{ type: 'text', text: 'second' }] }]);
    expect((await c.messages.create(ask('x'))).content).toEqual([{ type: 'text', text: 'second' }]);
    expect(() => d.setScript([{ reply: [] }] as unknown as Script)).toThrow(ScriptError);
    d.setScript(null);
    expect((await c.messages.create(ask('x'))).content).toEqual([{ type: 'text', text: OFFLINE_REPLY }]);
  });
});

describe('errors', () => {
  const cases = [
    [400, 'invalid_request_error', Anthropic.BadRequestError],
    [401, 'authentication_error', Anthropic.AuthenticationError],
    [429, 'rate_limit_error', Anthropic.RateLimitError],
    [500, 'api_error', Anthropic.InternalServerError],
    [529, 'overloaded_error', Anthropic.APIError],
  ] as const;

  it.each(cases)('answers %i with the API error body and request-id', async (status, type, cls) => {
    const d = await start([{ times: 'always', error: { status } }]);
    const err = await client(d)
      .messages.create(ask('x'))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(cls);
    const apiError = err as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(status);
    expect(apiError.error).toMatchObject({ type: 'error', error: { type }, request_id: d.requests[0]!.requestId });
    expect(apiError.requestID).toBe(d.requests[0]!.requestId);
    expect(d.requests[0]).toMatchObject({ status, completion: 'completed', rule: { index: 0 } });
  });

  it('sends retry-after and anthropic-ratelimit reset headers with a 429, and a custom message', async () => {
    const d = await start([
      {
        error: {
          status: 429,
          retryAfterSeconds: 17,
          message: 'slow down',
          headers: { 'anthropic-ratelimit-unified-reset': '1790000000' },
        },
      },
    ]);
    const before = Date.now();
    const res = await post(d, '/v1/messages', JSON.stringify({ ...ask('x'), stream: true }));
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('17');
    expect(res.headers.get('anthropic-ratelimit-unified-reset')).toBe('1790000000');
    const reset = Date.parse(res.headers.get('anthropic-ratelimit-requests-reset')!);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 17_000);
    expect(reset).toBeLessThanOrEqual(Date.now() + 17_000);
    expect(res.headers.get('anthropic-ratelimit-tokens-reset')).toBe(
      res.headers.get('anthropic-ratelimit-requests-reset'),
    );
    expect(JSON.parse(res.text)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'slow down' },
      request_id: res.headers.get('request-id'),
    });
  });

  it('can fail mid-stream with an SSE error event', async () => {
    const d = await start([{ error: { status: 529, midStream: true } }]);
    const res = await post(d, '/v1/messages', JSON.stringify({ ...ask('x'), stream: true }));
    expect(res.status).toBe(200);
    const events = parseSse(res.text);
    expect(events.map(([e]) => e)).toEqual(['message_start', 'ping', 'error']);
    expect(events[2]![1].error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
    const again = client(d);
    d.setScript([{ error: { status: 529, midStream: true } }]);
    await expect(again.messages.stream(ask('x')).finalMessage()).rejects.toThrow(/Overloaded/);
  });

  it('can drop the connection without answering', async () => {
    const d = await start([{ disconnect: true }, { reply: [{ type: 'text', text: 'back' }] }]);
    const c = client(d);
    await expect(c.messages.create(ask('x'))).rejects.toBeInstanceOf(Anthropic.APIConnectionError);
    expect(d.requests[0]!.completion).toBe('disconnected');
    expect((await c.messages.create(ask('x'))).content).toEqual([{ type: 'text', text: 'back' }]);
  });

  it('answers bad input with API errors and keeps serving', async () => {
    const d = await start([{ times: 'always', reply: [{ type: 'text', text: 'fine' }] }]);
    const bad = await post(d, '/v1/messages', '{not json');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const notObject = await post(d, '/v1/messages', '[1,2]');
    expect(notObject.status).toBe(400);
    const noMessages = await post(d, '/v1/messages', '{"model":"m"}');
    expect(noMessages.status).toBe(400);
    expect(JSON.parse(noMessages.text).error.message).toBe('messages: Field required');
    const missing = await post(d, '/v1/complete', '{}');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const get = await fetch(`${d.url}/v1/messages`);
    expect(get.status).toBe(404);
    expect(d.requests.map((r) => [r.kind, r.status])).toEqual([
      ['other', 400],
      ['other', 400],
      ['other', 400],
      ['other', 404],
      ['other', 404],
    ]);
    expect((await client(d).messages.create(ask('x'))).content).toEqual([{ type: 'text', text: 'fine' }]);
  });

  it('counts tokens roughly', async () => {
    const d = await start();
    const res = await client(d).messages.countTokens({
      model: 'm',
      messages: [{ role: 'user', content: 'x'.repeat(400) }],
    });
    expect(res.input_tokens).toBeGreaterThan(90);
    expect(res.input_tokens).toBeLessThan(200);
    expect(d.requests[0]!.kind).toBe('count_tokens');
  });
});

describe('slow streams and aborts', () => {
  it('records a stream the client abandoned as aborted and stops writing', async () => {
    const d = await start([{ reply: [{ type: 'text', text: 'w '.repeat(200), delayMs: 20 }] }]);
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${d.url}/v1/messages`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (res) => {
          res.on('data', (chunk: Buffer) => {
            seen.push(chunk.toString());
            if (seen.join('').includes('text_delta')) {
              req.destroy();
              resolve();
            }
          });
          res.on('error', () => undefined);
        },
      );
      req.on('error', (e) =>
        e.message.includes('socket hang up') || e.message.includes('aborted') ? undefined : reject(e),
      );
      req.end(JSON.stringify({ ...ask('x'), stream: true }));
    });
    const r = await d.waitForRequest((x) => x.completion !== 'pending');
    expect(r.completion).toBe('aborted');
    expect(r.status).toBe(200);
  });

  it('waits `delayMs` before answering, and the wait ends if the client leaves', async () => {
    const d = await start([{ delayMs: 60_000, reply: [{ type: 'text', text: 'late' }] }]);
    const controller = new AbortController();
    const pending = client(d).messages.create(ask('x'), { signal: controller.signal });
    await d.waitForRequest((r) => r.rule !== null);
    controller.abort();
    await expect(pending).rejects.toThrow();
    const r = await d.waitForRequest((x) => x.completion !== 'pending');
    expect(r.completion).toBe('aborted');
  });

  it('waitForRequest rejects after its timeout', async () => {
    const d = await start();
    await expect(d.waitForRequest(() => true, { timeoutMs: 20 })).rejects.toThrow(/no matching request within 20 ms/);
  });
});

describe('control routes and retention', () => {
  it('serves the recorded requests, clears them, and replaces the script over HTTP', async () => {
    const d = await start([{ reply: [{ type: 'text', text: 'one' }] }]);
    await client(d).messages.create(ask('first'));
    const listed = (await (await fetch(`${d.url}/_double/requests`)).json()) as {
      requests: Array<{ lastUserText: string; seq: number }>;
    };
    expect(listed.requests.map((r) => [r.seq, r.lastUserText])).toEqual([[0, 'first']]);

    const bad = await fetch(`${d.url}/_double/script`, { method: 'PUT', body: JSON.stringify([{ reply: [] }]) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: string[] }).problems[0]).toMatch(/^rule 0\.reply/);
    const good = await fetch(`${d.url}/_double/script`, {
      method: 'PUT',
      body: JSON.stringify([{ times: 'always', reply: [{ type: 'text', text: 'two' }] }]),
    });
    expect(await good.json()).toEqual({ rules: 1 });
    expect((await client(d).messages.create(ask('x'))).content).toEqual([{ type: 'text', text: 'two' }]);

    expect(await (await fetch(`${d.url}/_double/requests`, { method: 'DELETE' })).json()).toEqual({ cleared: 2 });
    expect(d.requests).toHaveLength(0);
    await client(d).messages.create(ask('y'));
    expect(d.requests.map((r) => r.seq)).toEqual([2]);
    expect((await fetch(`${d.url}/_double/nope`)).status).toBe(404);
    expect(d.requests).toHaveLength(1);
  });

  it('keeps only the newest `maxRecorded` requests', async () => {
    const d = await start([{ times: 'always', reply: [{ type: 'text', text: 'ok' }] }], 2);
    for (const t of ['a', 'b', 'c']) await client(d).messages.create(ask(t));
    expect(d.requests.map((r) => [r.seq, r.lastUserText])).toEqual([
      [1, 'b'],
      [2, 'c'],
    ]);
  });
});
