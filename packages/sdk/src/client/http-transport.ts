import type { Logger } from 'pino';
import type { z } from 'zod';
import { BubbleApiError, errorFromResponse, parseRetryAfter } from './bubble-api-error.js';
import { equalJitterDelay, sleep } from './backoff.js';
import { isCredentialsUnavailable, type Credentials } from './credentials.js';
import { mayRetry, type RetryMode } from './retry-classification.js';

// The retry rules live with the sdk's other retry classification; re-exported for existing imports.
export { mayRetry, type RetryMode } from './retry-classification.js';

export interface RetryOptions {
  /** Total attempts, the first included. 1 disables retries. */
  readonly attempts: number;
  readonly baseMs: number;
  readonly capMs: number;
  /** Longest `Retry-After` the client is willing to wait, in ms. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = Object.freeze({
  attempts: 4,
  baseMs: 200,
  capMs: 5_000,
  maxRetryAfterMs: 30_000,
});

export interface TransportOptions {
  readonly baseUrl: string;
  /** Where the bearer comes from; none sends requests without `authorization`. */
  readonly credentials: Credentials | undefined;
  readonly timeoutMs: number;
  readonly retry: RetryOptions;
  readonly fetch: typeof globalThis.fetch;
  readonly logger: Logger;
  readonly random: () => number;
  /** Requests sent at once at most; the rest wait their turn in order. Default: no cap. */
  readonly maxInFlight?: number;
}

/** Attempts a request gets while the server says `rate_limited` (each waits its `Retry-After`). */
const RATE_LIMITED_ATTEMPTS = 10;

export interface RequestSpec<T> {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Record<string, string | number | undefined>;
  readonly body?: unknown;
  /** Validates a 2xx body; absent for 204 answers. */
  readonly schema?: z.ZodType<T>;
  readonly retry: RetryMode;
  readonly auth?: boolean;
  readonly signal?: AbortSignal;
}

export interface TransportResult<T> {
  readonly status: number;
  readonly body: T;
}

/** Sends HTTP requests to one Bubble server: auth, timeouts, typed errors, retries. */
export class HttpTransport {
  readonly #options: TransportOptions;
  /** Requests on the wire now, and those waiting for one of them to end (see `maxInFlight`). */
  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  /** A `rate_limited` answer holds every request of this client back until then (epoch ms). */
  #pausedUntil = 0;

  constructor(options: TransportOptions) {
    this.#options = options;
  }

  async request<T>(spec: RequestSpec<T>): Promise<TransportResult<T>> {
    const { retry, logger, random, credentials } = this.#options;
    let renewed = false;
    for (let attempt = 0; ; attempt += 1) {
      let failure: BubbleApiError;
      await this.#whenSendable(spec);
      const token =
        spec.auth === false || credentials === undefined ? undefined : await currentBearer(credentials, spec);
      await this.#takeSendableSlot(spec);
      try {
        return await this.#once(spec, token);
      } catch (error) {
        if (!(error instanceof BubbleApiError)) throw error;
        failure = error;
        // Paused before the slot goes to the next request in line, so that one waits too.
        this.#pauseFor(failure);
      } finally {
        this.#releaseSlot();
      }
      // A refused bearer may have expired: renewed once, the request is sent again at once (a
      // 401 acted on nothing, so this is safe for every request and does not count as a retry).
      // Not when the server only could not reach its identity provider: the token was not refused.
      if (
        failure.code === 'unauthorized' &&
        !failure.isAuthUnavailable &&
        token !== undefined &&
        !renewed &&
        credentials?.renew !== undefined
      ) {
        renewed = true;
        const next = await credentials.renew(token).catch(() => null);
        if (next !== null && next !== token) {
          logger.info({ method: spec.method, path: spec.path }, 'bearer refused; sending again with the renewed one');
          attempt -= 1;
          continue;
        }
      }
      const rateLimited = failure.code === 'rate_limited';
      const last = attempt + 1 >= (rateLimited ? Math.max(retry.attempts, RATE_LIMITED_ATTEMPTS) : retry.attempts);
      if (last || !mayRetry(failure, spec.retry)) throw failure;
      const retryAfterSeconds = failure.details.retryAfterSeconds;
      const backoff = equalJitterDelay(attempt, retry, random);
      const delay =
        typeof retryAfterSeconds === 'number'
          ? Math.max(backoff, Math.min(retryAfterSeconds * 1000, retry.maxRetryAfterMs))
          : backoff;
      logger.warn(
        {
          method: spec.method,
          path: spec.path,
          code: failure.code,
          status: failure.status,
          attempt: attempt + 1,
          delayMs: delay,
        },
        'bubble request failed; retrying',
      );
      try {
        await sleep(delay, spec.signal);
      } catch {
        throw abortedError(spec);
      }
    }
  }

  /**
   * Over the server's budget: every request of this client waits, not only this one, so a burst
   * (a bot opening thousands of threads) backs off as one instead of retrying in a herd.
   */
  #pauseFor(failure: BubbleApiError): void {
    const retryAfterSeconds = failure.details.retryAfterSeconds;
    if (failure.code !== 'rate_limited' || typeof retryAfterSeconds !== 'number') return;
    const untilMs = Date.now() + Math.min(retryAfterSeconds * 1000, this.#options.retry.maxRetryAfterMs);
    this.#pausedUntil = Math.max(this.#pausedUntil, untilMs);
  }

  /** A slot, taken when no pause holds requests back (one may begin while this waits in line). */
  async #takeSendableSlot(spec: RequestSpec<unknown>): Promise<void> {
    for (;;) {
      await this.#takeSlot(spec);
      if (this.#pausedUntil <= Date.now()) return;
      this.#releaseSlot();
      await this.#whenSendable(spec);
    }
  }

  /** Waits out a pause that a `rate_limited` answer to any request of this client set. */
  async #whenSendable(spec: RequestSpec<unknown>): Promise<void> {
    for (let wait = this.#pausedUntil - Date.now(); wait > 0; wait = this.#pausedUntil - Date.now()) {
      try {
        // Spread over a tenth of the pause, so the held requests do not all go at its last millisecond.
        await sleep(wait + this.#options.random() * Math.min(1_000, wait / 10), spec.signal);
      } catch {
        throw abortedError(spec);
      }
    }
  }

  async #takeSlot(spec: RequestSpec<unknown>): Promise<void> {
    const cap = this.#options.maxInFlight;
    if (cap === undefined || this.#inFlight < cap) {
      this.#inFlight += 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.#waiting.indexOf(take);
        if (at !== -1) this.#waiting.splice(at, 1);
        reject(abortedError(spec));
      };
      // The slot is handed over by `#releaseSlot` (the count stays as it is).
      const take = () => {
        spec.signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (spec.signal?.aborted) {
        reject(abortedError(spec));
        return;
      }
      spec.signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(take);
    });
  }

  #releaseSlot(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#inFlight -= 1;
  }

  async #once<T>(spec: RequestSpec<T>, token: string | undefined): Promise<TransportResult<T>> {
    const { baseUrl, timeoutMs, fetch } = this.#options;
    const url = new URL(spec.path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = spec.signal ? AbortSignal.any([timeout, spec.signal]) : timeout;
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const response = await fetch(url, { method: spec.method, headers, body, signal });
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (error) {
      throw transportFailure(error, spec, timeout, timeoutMs);
    }
    if (status < 200 || status > 299) {
      throw errorFromResponse(status, text, parseRetryAfter(retryAfter, Date.now()));
    }
    if (spec.schema === undefined) return { status, body: undefined as T };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw invalidResponse(spec, status, 'the body is not JSON');
    }
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) {
      throw invalidResponse(
        spec,
        status,
        parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '),
      );
    }
    return { status, body: parsed.data };
  }
}

/** The bearer to send; credentials with none to give (signed out) fail the request as unauthorized, unsent. */
async function currentBearer(credentials: Credentials, spec: RequestSpec<unknown>): Promise<string> {
  try {
    return await credentials.current();
  } catch (error) {
    if (isCredentialsUnavailable(error)) {
      // No bearer for now (the identity provider is unreachable): not sent, and not a sign-out.
      throw new BubbleApiError({
        code: 'network',
        status: 0,
        retryable: true,
        message: `${spec.method} ${spec.path} was not sent: no bearer for now (${error.message})`,
        details: { reason: 'credentials_unavailable' },
        cause: error,
      });
    }
    throw new BubbleApiError({
      code: 'unauthorized',
      status: 0,
      retryable: false,
      message: `${spec.method} ${spec.path} was not sent: no bearer (${error instanceof Error ? error.message : String(error)})`,
      cause: error,
    });
  }
}

function transportFailure(
  error: unknown,
  spec: RequestSpec<unknown>,
  timeout: AbortSignal,
  timeoutMs: number,
): BubbleApiError {
  const where = `${spec.method} ${spec.path}`;
  if (spec.signal?.aborted) return abortedError(spec);
  if (timeout.aborted) {
    return new BubbleApiError({
      code: 'timeout',
      status: 0,
      retryable: spec.retry === 'idempotent',
      message: `${where} got no answer within ${timeoutMs} ms`,
      details: { timeoutMs },
      cause: error,
    });
  }
  const causeCode = networkCauseCode(error);
  const refused = causeCode === 'ECONNREFUSED';
  return new BubbleApiError({
    code: 'network',
    status: 0,
    retryable: refused || spec.retry === 'idempotent',
    message: `${where} failed: ${causeCode ?? networkCauseMessage(error)}`,
    details: { connectionRefused: refused, ...(causeCode ? { cause: causeCode } : {}) },
    cause: error,
  });
}

/** The innermost error code (`ECONNREFUSED`, `ECONNRESET`, `UND_ERR_SOCKET`, …) of a fetch failure. */
function networkCauseCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      current = errors[0];
      continue;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The innermost message of a fetch failure ("fetch failed" says nothing). */
function networkCauseMessage(error: unknown): string {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    message = current.message || message;
    current = current.cause;
  }
  return message;
}

function abortedError(spec: RequestSpec<unknown>): BubbleApiError {
  return new BubbleApiError({
    code: 'aborted',
    status: 0,
    retryable: false,
    message: `${spec.method} ${spec.path} was aborted by the caller`,
    cause: spec.signal?.reason,
  });
}

function invalidResponse(spec: RequestSpec<unknown>, status: number, why: string): BubbleApiError {
  return new BubbleApiError({
    code: 'invalid_response',
    status,
    retryable: false,
    message: `${spec.method} ${spec.path} answered ${status} with a body this client cannot read: ${why}`,
  });
}
