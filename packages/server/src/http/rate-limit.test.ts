import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS } from './rate-limiter.js';
import { healthzMs, httpCall, type TestResponse } from '../testing/test-client.js';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';

/** HTTP rate limits (protocol.md, "Limits"; issue 13 row 7) against the real server on loopback. */
let w: TestWorld | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
});

const whoami = (token: string | undefined, localAddress?: string): Promise<TestResponse> =>
  httpCall(w!.server.url, 'GET', '/v1/auth/whoami', { token, localAddress });

/** A 429 as the spec has it: `rate_limited`, `Retry-After` in whole seconds, the same figure in `details`. */
function expectRateLimited(res: TestResponse, maxSeconds: number, message: RegExp): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: {
      code: 'rate_limited',
      message: expect.stringMatching(message),
      details: { retryAfterSeconds: expect.any(Number) },
    },
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
  expect(retryAfter).toBe(res.body.error.details.retryAfterSeconds);
}

/**
 * Keep-alive requests from `lanes` connections at once until one answers 429
 * (resolves with it) or `enough(sent, elapsedMs)` (resolves with undefined);
 * never more than 20,000.
 */
async function untilLimited(
  url: string,
  token: string,
  enough: (sent: number, elapsedMs: number) => boolean,
  lanes = 16,
): Promise<{ sent: number; limited: { retryAfter: number; message: string } | undefined }> {
  let sent = 0;
  let limited: { retryAfter: number; message: string } | undefined;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (limited === undefined && sent < 20_000 && !enough(sent, performance.now() - started)) {
      sent += 1;
      const res = await fetch(`${url}/v1/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { error?: { message: string } };
      if (res.status === 429)
        limited ??= { retryAfter: Number(res.headers.get('retry-after')), message: body.error?.message ?? '' };
      else expect(res.status).toBe(200);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { sent, limited };
}

describe('requests per principal', () => {
  it('answer 429 rate_limited with Retry-After once a principal is over its limit; another principal and /healthz are unaffected', async () => {
    // One token per 100 s: after the burst of 3, the next request cannot have been refilled.
    w = await startTestWorld(['alice', 'bob'], { rateLimits: { requests: { perSecond: 0.01, burst: 3 } } });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await w.as.alice!.get('/v1/auth/whoami')).status);
    expect(statuses).toEqual([200, 200, 200]);
    const started = performance.now();
    expectRateLimited(await w.as.alice!.get('/v1/auth/whoami'), 100, /^too many requests from alice; retry in \d+ s$/);
    expectRateLimited(await w.as.alice!.post('/v1/threads', { title: 'x' }), 100, /too many requests/);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((await w.as.bob!.get('/v1/auth/whoami')).status).toBe(200);
    expect(await healthzMs(w.server.url)).toBeLessThan(1_000);
    // Routes without authentication are not limited.
    expect((await w.anonymous.get('/v1/info')).status).toBe(200);
  });

  it("count a human's bots against the human: a second bot shares the same budget, another human's do not", async () => {
    w = await startTestWorld(['alice', 'bob'], { rateLimits: { requests: { perSecond: 0.01, burst: 6 } } });
    // alice: 2 requests to mint the bots, then each bot spends 2 of the 4 left.
    const bot1 = await w.bot('alice', 'bot-one');
    const bot2 = await w.bot('alice', 'bot-two');
    const bobsBot = await w.bot('bob', 'bot-bob');
    const spent = [];
    for (const c of [bot1, bot1, bot2, bot2]) spent.push((await c.get('/v1/auth/whoami')).status);
    expect(spent).toEqual([200, 200, 200, 200]);
    expectRateLimited(
      await bot2.get('/v1/auth/whoami'),
      100,
      /^too many requests from bot-two \(counted with alice, who created it\); retry in \d+ s$/,
    );
    expectRateLimited(await bot1.get('/v1/auth/whoami'), 100, /counted with alice/);
    expectRateLimited(await w.as.alice!.get('/v1/auth/whoami'), 100, /^too many requests from alice;/);
    // A third bot would not help either: minting it is a request of alice's.
    expectRateLimited(
      await w.as.alice!.post('/v1/principals', { principalId: 'bot-three', kind: 'bot' }),
      100,
      /alice/,
    );
    expect((await w.as.bob!.get('/v1/auth/whoami')).status).toBe(200);
    expect((await bobsBot.get('/v1/auth/whoami')).status).toBe(200);
    expect(await healthzMs(w.server.url)).toBeLessThan(1_000);
  });

  it('can be turned off', async () => {
    w = await startTestWorld(['alice'], { rateLimits: { requests: false } });
    const { burst, perSecond } = DEFAULT_RATE_LIMITS.requests;
    // Past what the default would have let through in the same time (its burst plus its refill, and a margin).
    const pastDefault = (sent: number, ms: number): boolean => sent > burst + (perSecond * ms) / 1000 + 200;
    const { limited } = await untilLimited(w.server.url, w.tokens.alice!, pastDefault);
    expect(limited).toBeUndefined();
  }, 30_000);
});

describe('failed authentications per client address', () => {
  it('answer 429 with Retry-After past the limit, for every token not already in use; successes cost nothing; other addresses and /healthz are unaffected', async () => {
    w = await startTestWorld(['alice', 'bob', 'carol'], { rateLimits: { failedAuth: { perSecond: 0.01, burst: 5 } } });
    const bad = `bubble_user_${'A'.repeat(43)}`;
    // Successful requests do not draw from the failed-auth budget, nor do requests without a bearer (no lookup).
    for (let i = 0; i < 20; i += 1) expect((await whoami(w.tokens.alice)).status).toBe(200);
    for (let i = 0; i < 20; i += 1) expect((await whoami(undefined)).status).toBe(401);
    const failures = [];
    for (let i = 0; i < 5; i += 1) failures.push((await whoami(`${bad.slice(0, -1)}${i}`)).status);
    expect(failures).toEqual([401, 401, 401, 401, 401]);
    const started = performance.now();
    expectRateLimited(await whoami(bad), 100, /^too many failed authentications from this address; retry in \d+ s$/);
    expectRateLimited(await whoami('not-even-a-token'), 100, /failed authentications/);
    // A right token that this server has not seen in use yet needs a lookup: refused too, until the budget refills.
    expectRateLimited(await whoami(w.tokens.carol), 100, /failed authentications/);
    expect(performance.now() - started).toBeLessThan(1_000);
    // A token already in use (alice's) keeps working from the same address, so people behind one NAT are not locked out.
    expect((await whoami(w.tokens.alice)).status).toBe(200);
    // Another client address has its own budget: its wrong token is a plain 401, its right one works.
    expect((await whoami(bad, '127.0.0.2')).status).toBe(401);
    expect((await whoami(w.tokens.bob, '127.0.0.2')).status).toBe(200);
    expect(await healthzMs(w.server.url)).toBeLessThan(1_000);
  });
});

describe('defaults', () => {
  it('a server started with no rate-limit options limits requests per principal and failed authentications per address', async () => {
    w = await startTestWorld(['alice', 'bob']);
    const { failedAuth, requests } = DEFAULT_RATE_LIMITS;
    // Both tokens in use before the address runs out of failed authentications (see the test above).
    expect((await whoami(w.tokens.alice)).status).toBe(200);
    expect((await whoami(w.tokens.bob)).status).toBe(200);
    // Failed authentications: the default burst, then 429 (the budget refills at 1/s, slower than this loop runs).
    const statuses = new Set<number>();
    let limited: TestResponse | undefined;
    for (let i = 0; i < failedAuth.burst + 20 && limited === undefined; i += 1) {
      const res = await whoami(`bubble_user_${'B'.repeat(42)}${i % 10}`);
      if (res.status === 429) limited = res;
      else statuses.add(res.status);
    }
    expect([...statuses]).toEqual([401]);
    expect(limited).toBeDefined();
    expectRateLimited(limited!, 60, /failed authentications/);
    // Requests: alice's burst, then 429 (sent faster than the refill; at most 20,000).
    const flood = await untilLimited(w.server.url, w.tokens.alice!, () => false);
    expect(flood.limited?.message).toMatch(/^too many requests from alice; retry in \d+ s$/);
    expect(flood.limited?.retryAfter).toBeGreaterThanOrEqual(1);
    expect(flood.sent).toBeGreaterThan(requests.burst);
    expect((await whoami(w.tokens.bob)).status).toBe(200);
    expect(await healthzMs(w.server.url)).toBeLessThan(1_000);
  }, 60_000);
});
