import { takeToken, type Bucket } from '../domain/token-bucket.js';

export interface RateLimitOptions {
  /** Sustained rate: tokens added per second (fractions allowed). */
  perSecond: number;
  /** Tokens a key may spend at once (the bucket's size). */
  burst: number;
}

/** A limit, or `false` for none. */
export type RateLimitSetting = RateLimitOptions | false;

/** The server's three rate limits (protocol.md, "Limits"); each is on unless set to `false`. */
export interface RateLimits {
  /** HTTP requests per principal; a bot's count against the human who created it. */
  requests?: RateLimitSetting;
  /** WebSocket frames per principal, across all its sockets; a bot's count against its human. */
  frames?: RateLimitSetting;
  /** Failed authentications (an unknown or revoked bearer, HTTP or `client.auth`) per client address. */
  failedAuth?: RateLimitSetting;
}

/**
 * Defaults for a team server, chosen never to trip normal use:
 *
 * - requests, 500/s and 2,500 at once per human (with their bots): claude-scuba
 *   appends at most one batch per 50 ms per thread while it streams, so this is
 *   25 threads streaming at once for ever, or a web page opening hundreds of
 *   threads in one go; it is still under a tenth of what a 2-core machine
 *   commits (BENCHMARKS.md), so one person cannot take the server.
 * - frames, 200/s and 2,000 at once per human: clients send few frames
 *   (subscribe, unsubscribe, ping); 2,000 covers a socket opening its 1,000
 *   subscriptions at once, twice.
 * - failed authentications, 1/s and 60 at once per address: a person retyping a
 *   token or a bot retrying a revoked one never gets there; a loop trying
 *   tokens is held to one store lookup a second.
 */
export const DEFAULT_RATE_LIMITS = Object.freeze({
  requests: Object.freeze({ perSecond: 500, burst: 2_500 }),
  frames: Object.freeze({ perSecond: 200, burst: 2_000 }),
  failedAuth: Object.freeze({ perSecond: 1, burst: 60 }),
}) satisfies Required<RateLimits>;

/** Keys (principals, client addresses) a limiter remembers at most. */
export const DEFAULT_MAX_KEYS = 100_000;

/**
 * Token buckets by key, in bounded memory: the buckets live in a Map kept in
 * order of last use, and past `maxKeys` the least recently used is dropped.
 * A dropped bucket only forgets a debt (the key starts again with a full
 * burst), so a client cycling keys gains no more than fresh keys give it, and
 * the keys in use now are never the ones dropped.
 */
export function createRateLimiter(options: RateLimitOptions, config: { maxKeys?: number; now?: () => number } = {}) {
  const maxKeys = config.maxKeys ?? DEFAULT_MAX_KEYS;
  const now = config.now ?? Date.now;
  const buckets = new Map<string, Bucket>();
  const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
  return {
    /**
     * Takes `count` tokens (default 1) for `key`, all or none: 0 when it had them, else the whole
     * seconds (at least 1) until it will (a count over the burst costs the whole burst).
     */
    take(key: string, count = 1): number {
      const previous = buckets.get(key);
      const result = takeToken(previous, now(), options.perSecond, options.burst, count);
      if (previous !== undefined) buckets.delete(key);
      else if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value as string);
      buckets.set(key, result.bucket);
      return result.ok ? 0 : seconds(result.retryAfterMs);
    },
    /** Like `take` but takes nothing: 0 when `key` has a token now, else the seconds until it will. */
    waitFor(key: string): number {
      const bucket = buckets.get(key);
      if (bucket === undefined) return 0;
      const tokens = Math.min(
        options.burst,
        bucket.tokens + (Math.max(0, now() - bucket.updatedMs) * options.perSecond) / 1000,
      );
      return tokens >= 1 ? 0 : seconds(((1 - tokens) * 1000) / options.perSecond);
    },
    /** Keys remembered now (for tests of the bound). */
    get size(): number {
      return buckets.size;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

export interface RateLimiters {
  requests: RateLimiter | undefined;
  frames: RateLimiter | undefined;
  failedAuth: RateLimiter | undefined;
}

/** The limiters a server runs, from its options: absent limits take the defaults, `false` ones are off. */
export function createRateLimiters(limits: RateLimits = {}): RateLimiters {
  const make = (setting: RateLimitSetting | undefined, fallback: RateLimitOptions): RateLimiter | undefined =>
    setting === false ? undefined : createRateLimiter(setting ?? fallback);
  return {
    requests: make(limits.requests, DEFAULT_RATE_LIMITS.requests),
    frames: make(limits.frames, DEFAULT_RATE_LIMITS.frames),
    failedAuth: make(limits.failedAuth, DEFAULT_RATE_LIMITS.failedAuth),
  };
}
