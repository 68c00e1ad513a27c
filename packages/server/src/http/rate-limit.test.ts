import { afterEach, describe, expect, it } from 'vitest';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';

let w: TestWorld | undefined;
afterEach(async () => {
  await w?.stop();
});

describe('rate limits', () => {
  it('answer 429 rate_limited with Retry-After once a principal is over its limit, per principal', async () => {
    // One token per 100 s: after the burst of 3, the next request cannot have been refilled.
    w = await startTestWorld(['alice', 'bob'], { rateLimit: { perSecond: 0.01, burst: 3 } });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await w.as['alice']!.get('/v1/auth/whoami')).status);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await w.as['alice']!.get('/v1/auth/whoami');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String), details: { retryAfterSeconds: expect.any(Number) } } });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(100);
    expect(retryAfter).toBe(limited.body.error.details.retryAfterSeconds);
    expect((await w.as['bob']!.get('/v1/auth/whoami')).status).toBe(200);
    // unauthenticated routes are not limited
    expect((await w.anonymous.get('/healthz')).status).toBe(200);
  });

  it('are off by default', async () => {
    w = await startTestWorld(['alice']);
    const statuses = new Set<number>();
    for (let i = 0; i < 50; i += 1) statuses.add((await w.as['alice']!.get('/v1/auth/whoami')).status);
    expect([...statuses]).toEqual([200]);
  });
});
