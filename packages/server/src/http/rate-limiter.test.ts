import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limiter.js';

describe('createRateLimiter', () => {
  it('grants a burst per key, then says how many whole seconds to wait', () => {
    let now = 0;
    const limiter = createRateLimiter({ perSecond: 0.5, burst: 2 }, { now: () => now });
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a'), limiter.take('b')]).toEqual([0, 0, 2, 0]);
    expect(limiter.waitFor('a')).toBe(2);
    now = 1_000;
    expect(limiter.waitFor('a')).toBe(1);
    now = 2_000;
    expect(limiter.waitFor('a')).toBe(0);
    expect(limiter.take('a')).toBe(0);
  });

  it('takes several tokens at once, all or none', () => {
    let now = 0;
    const limiter = createRateLimiter({ perSecond: 1, burst: 10 }, { now: () => now });
    expect(limiter.take('a', 8)).toBe(0);
    expect(limiter.take('a', 3)).toBe(1);
    expect(limiter.take('a', 2)).toBe(0);
    expect(limiter.take('a', 3)).toBe(3);
    now = 3_000;
    expect(limiter.take('a', 3)).toBe(0);
  });

  it('waitFor takes nothing', () => {
    const limiter = createRateLimiter({ perSecond: 1, burst: 1 }, { now: () => 0 });
    for (let i = 0; i < 5; i += 1) expect(limiter.waitFor('a')).toBe(0);
    expect(limiter.size).toBe(0);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.waitFor('a')).toBe(1);
  });

  it('remembers at most maxKeys, dropping the least recently used, never the keys in use', () => {
    const limiter = createRateLimiter({ perSecond: 0.001, burst: 1 }, { maxKeys: 100, now: () => 0 });
    expect(limiter.take('attacker')).toBe(0);
    for (let i = 0; i < 10_000; i += 1) {
      limiter.take(`cycled-${i}`);
      // The key in use keeps its debt however many others pass through.
      if (i % 50 === 0) expect(limiter.take('attacker')).toBeGreaterThan(0);
    }
    expect(limiter.size).toBe(100);
  });
});
