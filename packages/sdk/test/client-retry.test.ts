import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BubbleApiError, BubbleClient } from '../src/index.js';
import { HttpFaultProxy, type FaultAction } from './support/http-fault-proxy.js';

let server: TestServer;
let token: string;
let direct: BubbleClient;
let proxy: HttpFaultProxy | undefined;

const FAST_RETRY = { attempts: 4, baseMs: 20, capMs: 100 };

beforeAll(async () => {
  server = await startTestServer();
  token = (await server.createHuman('alice')).token.token;
  direct = new BubbleClient({ url: server.url, token });
});

afterEach(async () => {
  await proxy?.stop();
  proxy = undefined;
});

afterAll(async () => {
  await server?.stop();
});

/** A plan that applies `fault` to the first request matching method and path prefix, and forwards everything else. */
function firstMatch(method: string, pathPrefix: string, fault: FaultAction): (m: string, p: string) => FaultAction {
  let used = false;
  return (m, p) => {
    if (!used && m === method && p.startsWith(pathPrefix)) {
      used = true;
      return fault;
    }
    return { kind: 'forward' };
  };
}

async function caught(promise: Promise<unknown>): Promise<BubbleApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BubbleApiError);
  return error as BubbleApiError;
}

describe('append retries are safe', () => {
  it('retries an append whose answer was lost after the server stored it, without duplicating', async () => {
    const { thread } = await direct.createThread({ title: 'retry' });
    proxy = await HttpFaultProxy.start(
      server.url,
      firstMatch('POST', `/v1/threads/${thread.threadId}/events`, { kind: 'drop-response' }),
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY });
    const result = await client.appendEvents(thread.threadId, [
      { type: 'acme.step', data: { n: 1 } },
      { type: 'acme.step', data: { n: 2 } },
    ]);
    expect(proxy.seen.filter((r) => r.method === 'POST').map((r) => r.action)).toEqual(['drop-response', 'forward']);
    // The second send was a replay of what the first one stored.
    expect(result.replayed).toBe(true);
    expect(result.events.map((e) => e.seq)).toEqual([2, 3]);
    const log = await direct.readEvents(thread.threadId);
    expect(log.events.map((e) => [e.seq, e.type, e.data.n ?? null])).toEqual([
      [1, 'participant_added', null],
      [2, 'acme.step', 1],
      [3, 'acme.step', 2],
    ]);
  });

  it('retries an append that timed out while the server stored it, without duplicating', async () => {
    const { thread } = await direct.createThread({ title: 'timeout' });
    proxy = await HttpFaultProxy.start(
      server.url,
      firstMatch('POST', `/v1/threads/${thread.threadId}/events`, { kind: 'delay-response', ms: 1_500 }),
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY, timeoutMs: 300 });
    const envelope = await client.appendEvent(thread.threadId, { type: 'acme.once', data: {} });
    expect(envelope.seq).toBe(2);
    expect(proxy.count('POST', `/v1/threads/${thread.threadId}/events`)).toBe(2);
    const log = await direct.readEvents(thread.threadId);
    expect(log.events.filter((e) => e.type === 'acme.once')).toHaveLength(1);
    expect(log.headSeq).toBe(2);
  });

  it('retries a 503 with a non-JSON body, rebuilt from the status', async () => {
    const { thread } = await direct.createThread({});
    proxy = await HttpFaultProxy.start(
      server.url,
      firstMatch('POST', `/v1/threads/${thread.threadId}/events`, {
        kind: 'answer',
        status: 503,
        body: '<html>upstream down</html>',
      }),
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY });
    await client.appendEvent(thread.threadId, { type: 'acme.after503', data: {} });
    expect(proxy.seen.filter((r) => r.method === 'POST').map((r) => r.action)).toEqual(['answer', 'forward']);

    // Without retries the same failure surfaces as a typed error.
    await proxy.stop();
    proxy = await HttpFaultProxy.start(server.url, () => ({
      kind: 'answer',
      status: 503,
      body: 'Service Unavailable',
    }));
    const once = new BubbleClient({ url: proxy.url, token, retry: false });
    const error = await caught(once.appendEvent(thread.threadId, { type: 'acme.x', data: {} }));
    expect({ code: error.code, status: error.status, retryable: error.retryable }).toEqual({
      code: 'internal',
      status: 503,
      retryable: true,
    });
    expect(error.message).toContain('Service Unavailable');
  });

  it('gives up after the bounded number of attempts', async () => {
    const { thread } = await direct.createThread({});
    proxy = await HttpFaultProxy.start(server.url, (method) =>
      method === 'POST' ? { kind: 'drop-response' } : { kind: 'forward' },
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: { attempts: 3, baseMs: 10, capMs: 20 } });
    const error = await caught(client.appendEvent(thread.threadId, { type: 'acme.lost', data: {} }));
    expect(error.code).toBe('network');
    expect(error.retryable).toBe(true);
    expect(proxy.count('POST', '/v1/threads/')).toBe(3);
    // Every attempt reached the server, and the event still landed exactly once.
    const log = await direct.readEvents(thread.threadId);
    expect(log.events.filter((e) => e.type === 'acme.lost')).toHaveLength(1);
  });

  it('waits out a 429 and honours Retry-After', async () => {
    const { thread } = await direct.createThread({});
    proxy = await HttpFaultProxy.start(
      server.url,
      firstMatch('POST', `/v1/threads/${thread.threadId}/events`, {
        kind: 'answer',
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': '0' },
        body: JSON.stringify({ error: { code: 'rate_limited', message: 'slow down', details: {} } }),
      }),
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY });
    const envelope = await client.appendEvent(thread.threadId, { type: 'acme.limited', data: {} });
    expect(envelope.seq).toBe(2);
    expect(proxy.seen.filter((r) => r.method === 'POST').map((r) => r.action)).toEqual(['answer', 'forward']);
  });
});

describe('non-idempotent calls are never retried blindly', () => {
  it('does not resend a thread creation without key after a lost answer', async () => {
    const before = (await direct.listThreads()).length;
    proxy = await HttpFaultProxy.start(server.url, firstMatch('POST', '/v1/threads', { kind: 'drop-response' }));
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY });
    const error = await caught(client.createThread({ title: 'once only' }));
    expect(error.code).toBe('network');
    expect(error.retryable).toBe(false);
    expect(proxy.count('POST', '/v1/threads')).toBe(1);
    const after = await direct.listThreads();
    expect(after.length).toBe(before + 1);
    expect(after.filter((t) => t.title === 'once only')).toHaveLength(1);
  });

  it('retries a thread creation with a key and gets the thread the lost answer had created', async () => {
    proxy = await HttpFaultProxy.start(server.url, firstMatch('POST', '/v1/threads', { kind: 'drop-response' }));
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY });
    const { thread, created } = await client.createThread({ title: 'keyed once', key: 'retry-key-1' });
    expect(created).toBe(false);
    expect(proxy.count('POST', '/v1/threads')).toBe(2);
    expect((await direct.listThreads()).filter((t) => t.title === 'keyed once').map((t) => t.threadId)).toEqual([
      thread.threadId,
    ]);
  });

  it('does not resend a bot creation or a token mint after a lost answer', async () => {
    proxy = await HttpFaultProxy.start(server.url, (method) =>
      method === 'POST' ? { kind: 'drop-response' } : { kind: 'forward' },
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY });
    const createError = await caught(client.createBot({ principalId: 'bot-once' }));
    expect({ code: createError.code, retryable: createError.retryable }).toEqual({ code: 'network', retryable: false });
    expect(proxy.count('POST', '/v1/principals')).toBe(1);
    // The bot was created by that single request.
    expect((await direct.getPrincipal('bot-once')).ownerPrincipalIds).toEqual(['alice']);

    const mintError = await caught(client.mintToken('bot-once'));
    expect(mintError.code).toBe('network');
    expect(proxy.count('POST', '/v1/principals/bot-once/tokens')).toBe(1);
    expect(await direct.listTokens('bot-once')).toHaveLength(2);
  });

  it('does not resend an unconditional artifact write after a timeout', async () => {
    const { thread } = await direct.createThread({});
    proxy = await HttpFaultProxy.start(
      server.url,
      firstMatch('PUT', `/v1/threads/${thread.threadId}/artifacts/`, { kind: 'delay-response', ms: 1_000 }),
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY, timeoutMs: 200 });
    const error = await caught(
      client.putArtifact(thread.threadId, 'notes.md', { content: 'x', mediaType: 'text/markdown' }),
    );
    expect({ code: error.code, retryable: error.retryable }).toEqual({ code: 'timeout', retryable: false });
    expect(proxy.count('PUT', '/v1/threads/')).toBe(1);
    expect((await direct.getArtifact(thread.threadId, 'notes.md')).version).toBe(1);
  });

  it('retries a conditional artifact write and recognises its own landed write', async () => {
    const { thread } = await direct.createThread({});
    await direct.putArtifact(thread.threadId, 'plan.md', { content: 'v1', mediaType: 'text/markdown' });
    proxy = await HttpFaultProxy.start(
      server.url,
      firstMatch('PUT', `/v1/threads/${thread.threadId}/artifacts/`, { kind: 'drop-response' }),
    );
    const client = new BubbleClient({ url: proxy.url, token, retry: FAST_RETRY });
    const summary = await client.putArtifact(thread.threadId, 'plan.md', {
      content: 'v2',
      mediaType: 'text/markdown',
      baseVersion: 1,
    });
    expect(summary.version).toBe(2);
    expect(proxy.count('PUT', '/v1/threads/')).toBe(2);
    expect((await direct.listArtifacts(thread.threadId))[0]?.version).toBe(2);
  });
});
