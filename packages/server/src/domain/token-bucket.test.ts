import { describe, expect, it } from 'vitest';
import { takeToken, type Bucket } from './token-bucket.js';

describe('takeToken', () => {
  it('allows a burst, then refuses with the wait until the next token', () => {
    let bucket: Bucket | undefined;
    const results: Array<boolean | number> = [];
    for (let i = 0; i < 4; i += 1) {
      const r = takeToken(bucket, 1000, 2, 3);
      bucket = r.bucket;
      results.push(r.ok ? true : r.retryAfterMs);
    }
    expect(results).toEqual([true, true, true, 500]);
  });

  it('refills over time, up to the burst', () => {
    const empty: Bucket = { tokens: 0, updatedMs: 0 };
    expect(takeToken(empty, 250, 2, 3).ok).toBe(false);
    expect(takeToken(empty, 500, 2, 3).ok).toBe(true);
    const full = takeToken(empty, 60_000, 2, 3);
    expect(full.ok && full.bucket.tokens).toBe(2);
  });

  it('does not refill when the clock goes backwards', () => {
    const r = takeToken({ tokens: 0, updatedMs: 5000 }, 1000, 1, 1);
    expect(r.ok).toBe(false);
  });

  it('takes several tokens at once, or none, and says how long until all of them are there', () => {
    const first = takeToken(undefined, 0, 2, 10, 4);
    expect(first.ok && first.bucket.tokens).toBe(6);
    const refused = takeToken({ tokens: 3, updatedMs: 0 }, 0, 2, 10, 4);
    expect(refused).toEqual({ ok: false, bucket: { tokens: 3, updatedMs: 0 }, retryAfterMs: 500 });
    expect(takeToken({ tokens: 3, updatedMs: 0 }, 500, 2, 10, 4).ok).toBe(true);
  });

  it('charges a take larger than the burst the whole burst, so that it can be granted at all', () => {
    const full = takeToken(undefined, 0, 1, 5, 50);
    expect(full.ok && full.bucket.tokens).toBe(0);
    const later = takeToken({ tokens: 1, updatedMs: 0 }, 0, 1, 5, 50);
    expect(later.ok === false && later.retryAfterMs).toBe(4000);
  });
});
