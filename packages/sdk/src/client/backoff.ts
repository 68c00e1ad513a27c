/** Exponential backoff with jitter: pure, with the random source passed in. */
export interface BackoffOptions {
  /** Delay ceiling before jitter for the first retry, in ms. */
  readonly baseMs: number;
  /** Largest delay ever returned, in ms. */
  readonly capMs: number;
}

/**
 * "Full jitter": a uniformly random delay between 0 and min(cap, base * 2^attempt).
 * `attempt` counts from 0 (the first retry). `random` returns a number in [0, 1).
 */
export function fullJitterDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const ceiling = exponentialCeiling(attempt, options);
  return Math.floor(random() * ceiling);
}

/**
 * "Equal jitter": half the ceiling plus a random half, so a retry never fires at once. Used for
 * HTTP retries, where an immediate resend right after a timeout helps nobody.
 */
export function equalJitterDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const ceiling = exponentialCeiling(attempt, options);
  return Math.floor(ceiling / 2 + random() * (ceiling / 2));
}

export function exponentialCeiling(attempt: number, options: BackoffOptions): number {
  const exponent = Math.min(Math.max(0, attempt), 30);
  return Math.min(options.capMs, options.baseMs * 2 ** exponent);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
