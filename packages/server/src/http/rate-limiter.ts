import { BubbleError } from '../errors/bubble-error.js';
import { takeToken, type Bucket } from '../domain/token-bucket.js';

export interface RateLimitOptions {
  /** Sustained requests per second per principal. */
  perSecond: number;
  /** Requests a principal may make at once. */
  burst: number;
}

const MAX_BUCKETS = 100_000;

/** Per-principal request limits; `check` throws 429 `rate_limited` with `Retry-After` (seconds). */
export function createRateLimiter(options: RateLimitOptions, now: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();
  return {
    check(principalId: string): void {
      const result = takeToken(buckets.get(principalId), now(), options.perSecond, options.burst);
      if (buckets.size >= MAX_BUCKETS && !buckets.has(principalId)) buckets.clear();
      buckets.set(principalId, result.bucket);
      if (!result.ok) {
        const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
        throw new BubbleError(
          'rate_limited',
          `too many requests from ${principalId}; retry in ${seconds} s`,
          { retryAfterSeconds: seconds },
          { 'retry-after': String(seconds) },
        );
      }
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
