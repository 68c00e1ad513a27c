/** A token bucket: `burst` requests at once, refilled at `perSecond`. Pure: the clock is passed in. */
export interface Bucket {
  tokens: number;
  updatedMs: number;
}

export type TakeResult = { ok: true; bucket: Bucket } | { ok: false; bucket: Bucket; retryAfterMs: number };

export function takeToken(bucket: Bucket | undefined, nowMs: number, perSecond: number, burst: number): TakeResult {
  const previous = bucket ?? { tokens: burst, updatedMs: nowMs };
  const elapsed = Math.max(0, nowMs - previous.updatedMs);
  const tokens = Math.min(burst, previous.tokens + (elapsed * perSecond) / 1000);
  if (tokens >= 1) return { ok: true, bucket: { tokens: tokens - 1, updatedMs: nowMs } };
  return {
    ok: false,
    bucket: { tokens, updatedMs: nowMs },
    retryAfterMs: Math.ceil(((1 - tokens) * 1000) / perSecond),
  };
}
