import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BubbleApiError,
  BubbleClient,
  CredentialsUnavailable,
  type Credentials,
  type LiveState,
} from '../src/index.js';
import { seqs, settle, take, waitUntil } from './support/live-helpers.js';
import { WsCloseProxy } from './support/ws-close-proxy.js';

/**
 * A bearer that is renewed (an identity provider's access token) against the real server: a
 * refused one is renewed once and the request, or the socket, goes on. Expiry itself is played
 * by a token the server does not know (HTTP 401, `client.auth` answered 4001) and by a relay that
 * closes an open socket with 4001, as the server does when an access token expires on it.
 */
let server: TestServer;
let good: string;
const STALE = 'bubble_user_stale-stale-stale-stale-stale-stale-stale';

/** Hands out `first`, then `good` once asked to renew; counts the renewals. */
function rotating(
  first: string,
  next: () => string | null = () => good,
): Credentials & { renewals: string[]; now: string } {
  const source = {
    now: first,
    renewals: [] as string[],
    current: () => source.now,
    renew: async (rejected: string) => {
      source.renewals.push(rejected);
      const fresh = next();
      if (fresh !== null) source.now = fresh;
      return fresh;
    },
  };
  return source;
}

beforeAll(async () => {
  server = await startTestServer();
  good = (await server.createHuman('alice', 'Alice')).token.token;
});

afterAll(async () => {
  await server?.stop();
});

describe('renewed credentials', () => {
  it('sends a refused request again once with the renewed bearer, also one that is not idempotent', async () => {
    const credentials = rotating(STALE);
    const client = new BubbleClient({ url: server.url, credentials });
    expect((await client.whoami()).principalId).toBe('alice');
    const { thread, created } = await client.createThread({ title: 'made after a renewal' });
    expect(created).toBe(true);
    expect(credentials.renewals).toEqual([STALE]);
    expect((await client.listThreads()).filter((t) => t.threadId === thread.threadId)).toHaveLength(1);
  });

  it('gives up after one renewal that does not help, and when there is nothing to renew to', async () => {
    const stuck = rotating(STALE, () => STALE);
    await expect(
      new BubbleClient({ url: server.url, credentials: stuck, retry: false }).whoami(),
    ).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    expect(stuck.renewals).toEqual([STALE]);
    const ended = rotating(STALE, () => null);
    await expect(new BubbleClient({ url: server.url, credentials: ended }).whoami()).rejects.toMatchObject({
      code: 'unauthorized',
    });
    expect(ended.renewals).toEqual([STALE]);
  });

  it('renews on a 4001 answer to client.auth and then subscribes', async () => {
    const writer = new BubbleClient({ url: server.url, token: good });
    const { thread } = await writer.createThread({ title: 'renew at sign-in' });
    const credentials = rotating(STALE);
    const client = new BubbleClient({ url: server.url, credentials, live: { reconnectBaseMs: 10 } });
    const events = client.subscribeThread(thread.threadId);
    expect(seqs(await take(events, 1))).toEqual([1]);
    expect(credentials.renewals).toEqual([STALE]);
    client.close();
    writer.close();
  });

  it('resumes from the last seq when an open socket is closed with 4001, exactly once, in order', async () => {
    const proxy = await WsCloseProxy.start(server.server.wsUrl);
    const writer = new BubbleClient({ url: server.url, token: good });
    const { thread } = await writer.createThread({ title: 'expires mid-stream' });
    let issued = 0;
    // A second token of Alice's: the renewed bearer must differ from the refused one.
    const second = (await new BubbleClient({ url: server.url, token: good }).mintMyToken()).token;
    expect(second).not.toBe(good);
    const credentials = rotating(good, () => (issued++ === 0 ? second : good));
    const states: LiveState[] = [];
    const client = new BubbleClient({
      url: server.url,
      credentials,
      live: { wsUrl: proxy.wsUrl, reconnectBaseMs: 10, onStateChange: (s) => states.push(s) },
    });
    try {
      const events = client.subscribeThread(thread.threadId);
      const note = (n: number) => writer.appendEvent(thread.threadId, { type: 'test.note', data: { n } });
      await note(1);
      expect(seqs(await take(events, 2))).toEqual([1, 2]);
      proxy.closeClients(4001, 'token expired');
      await note(2);
      await note(3);
      expect(seqs(await take(events, 2))).toEqual([3, 4]);
      expect(credentials.renewals).toEqual([good]);
      expect(proxy.authTokens).toEqual([good, second]);
      // The new socket subscribed from the last delivered seq, not from the start.
      expect(proxy.subscribes.filter((f) => f.threadId === thread.threadId).map((f) => f.afterSeq)).toEqual([0, 2]);
      expect(states.filter((s) => s === 'failed')).toEqual([]);
      // A second expiry later is renewed again: the count starts over once the server is ready.
      proxy.closeClients(4001, 'token expired');
      await note(4);
      expect(seqs(await take(events, 1))).toEqual([5]);
      expect(credentials.renewals).toHaveLength(2);
      expect(proxy.subscribes.filter((f) => f.threadId === thread.threadId).map((f) => f.afterSeq)).toEqual([0, 2, 4]);
    } finally {
      client.close();
      writer.close();
      await proxy.stop();
    }
  });

  it('keeps trying to renew while the issuer is unreachable (renew throws, or has nothing newer), then resumes from the last seq', async () => {
    const proxy = await WsCloseProxy.start(server.server.wsUrl);
    const writer = new BubbleClient({ url: server.url, token: good });
    const { thread } = await writer.createThread({ title: 'provider down at expiry' });
    const second = (await new BubbleClient({ url: server.url, token: good }).mintMyToken()).token;
    const renewals: string[] = [];
    let now = good;
    const credentials: Credentials = {
      current: () => now,
      renew: async (rejected) => {
        renewals.push(rejected);
        // First the provider cannot be reached, then the renewal has nothing newer, then it works.
        if (renewals.length === 1) throw new CredentialsUnavailable('the identity provider could not be reached');
        if (renewals.length === 2) return rejected;
        now = second;
        return second;
      },
    };
    const states: LiveState[] = [];
    const client = new BubbleClient({
      url: server.url,
      credentials,
      live: { wsUrl: proxy.wsUrl, reconnectBaseMs: 10, random: () => 0.01, onStateChange: (s) => states.push(s) },
    });
    try {
      const events = client.subscribeThread(thread.threadId);
      await writer.appendEvent(thread.threadId, { type: 'test.note', data: { n: 1 } });
      expect(seqs(await take(events, 2))).toEqual([1, 2]);
      proxy.closeClients(4001, 'token expired');
      await writer.appendEvent(thread.threadId, { type: 'test.note', data: { n: 2 } });
      expect(seqs(await take(events, 1))).toEqual([3]);
      expect(renewals).toEqual([good, good, good]);
      expect(proxy.authTokens).toEqual([good, second]);
      expect(proxy.subscribes.map((f) => f.afterSeq)).toEqual([0, 2]);
      expect(states).not.toContain('failed');
      expect(states).toContain('waiting');
    } finally {
      client.close();
      writer.close();
      await proxy.stop();
    }
  });

  it('reconnects, without renewing, when the 4001 says the server could not reach its identity provider', async () => {
    const proxy = await WsCloseProxy.start(server.server.wsUrl);
    const credentials = rotating(good);
    const states: LiveState[] = [];
    const client = new BubbleClient({
      url: server.url,
      credentials,
      live: { wsUrl: proxy.wsUrl, reconnectBaseMs: 10, random: () => 0.01, onStateChange: (s) => states.push(s) },
    });
    try {
      proxy.refuseAuth = {
        code: 4001,
        reason:
          'the identity provider http://127.0.0.1:9/ could not be reached to check this token (fetch failed); try again shortly',
      };
      client.subscribeGrantsAsIterable();
      await waitUntil(() => proxy.authTokens.length >= 3, 'three refused connections');
      expect(states).not.toContain('failed');
      proxy.refuseAuth = null;
      await waitUntil(() => client.live().connectionState === 'ready', 'ready again');
      expect(credentials.renewals).toEqual([]);
    } finally {
      client.close();
      await proxy.stop();
    }
  });

  it('is terminal when the credentials have no bearer to give (signed out)', async () => {
    const client = new BubbleClient({
      url: server.url,
      credentials: {
        current: () => {
          throw new Error('signed out');
        },
        renew: async () => null,
      },
      live: { reconnectBaseMs: 10 },
    });
    await expect(client.whoami()).rejects.toMatchObject({
      code: 'unauthorized',
      status: 0,
      message: 'GET /v1/auth/whoami was not sent: no bearer (signed out)',
    });
    const outcome = await settle(client.subscribeGrantsAsIterable().next());
    expect((outcome.error as BubbleApiError).details.closeCode).toBe(4001);
    expect((outcome.error as BubbleApiError).message).toContain('no bearer: signed out');
    expect(client.live().connectionState).toBe('failed');
    client.close();
  });

  it('is terminal when the renewed bearer is refused too', async () => {
    const credentials = rotating(STALE, () => 'bubble_user_also-stale-also-stale-also-stale-also');
    const client = new BubbleClient({ url: server.url, credentials, live: { reconnectBaseMs: 10 } });
    const outcome = await settle(client.subscribeGrantsAsIterable().next());
    expect(outcome.error).toBeInstanceOf(BubbleApiError);
    expect((outcome.error as BubbleApiError).details.closeCode).toBe(4001);
    expect(credentials.renewals).toHaveLength(1);
    await waitUntil(() => client.live().connectionState === 'failed', 'the connection failed');
    client.close();
  });
});
