/** A token bucket: `burst` requests at once, refilled at `perSecond`. Pure: the clock is passed in. */
export interface Bucket {
  tokens: number;
  updatedMs: number;
}

export type TakeResult = { ok: true; bucket: Bucket } | { ok: false; bucket: Bucket; retryAfterMs: number };

/**
 * Takes `count` tokens (default 1) at once, or none. A take of more than the whole burst costs
 * the whole burst instead: it could never be granted otherwise, and a full bucket is the most a
 * key may spend at once anyway.
 */
export function takeToken(
  bucket: Bucket | undefined,
  nowMs: number,
  perSecond: number,
  burst: number,
  count = 1,
): TakeResult {
  const cost = Math.min(count, burst);
  const previous = bucket ?? { tokens: burst, updatedMs: nowMs };
  const elapsed = Math.max(0, nowMs - previous.updatedMs);
  const tokens = Math.min(burst, previous.tokens + (elapsed * perSecond) / 1000);
  if (tokens >= cost) return { ok: true, bucket: { tokens: tokens - cost, updatedMs: nowMs } };
  return {
    ok: false,
    bucket: { tokens, updatedMs: nowMs },
    retryAfterMs: Math.ceil(((cost - tokens) * 1000) / perSecond),
  };
}
