import { isProviderUnreachableMessage } from './credentials.js';
import { ERROR_CATALOGUE, ErrorBodySchema, errorCodeForStatus, type ErrorCode } from '@bubble/protocol';

/**
 * Codes a client can see: every code of the wire catalogue, plus the failures that happen before
 * or instead of an answer (`timeout`, `network`), an answer the client cannot read
 * (`invalid_response`), and a caller's own abort (`aborted`).
 */
export type BubbleErrorCode = ErrorCode | 'timeout' | 'network' | 'invalid_response' | 'aborted';

export interface BubbleApiErrorInit {
  code: BubbleErrorCode;
  /** The HTTP status, or 0 when there was no HTTP answer. */
  status: number;
  /** Whether sending the same request again is safe and may succeed. */
  retryable: boolean;
  message: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error type the client throws: an answer of the server, or a failure to get one. */
export class BubbleApiError extends Error {
  readonly code: BubbleErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(init: BubbleApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'BubbleApiError';
    this.code = init.code;
    this.status = init.status;
    this.retryable = init.retryable;
    this.details = init.details ?? {};
  }

  /** True for a credential the server does not accept (401, WebSocket 4001 and 4003). */
  get isAuthError(): boolean {
    return this.code === 'unauthorized';
  }

  /**
   * True when the credential could not be *checked* for now, rather than refused: the server could
   * not reach its identity provider (a 401 with `details.reason` "identity_provider_unreachable", or a 4001 with that message), or the credentials had no
   * bearer for a passing reason (`CredentialsUnavailable`). The person stays signed in; try later.
   */
  get isAuthUnavailable(): boolean {
    if (this.details.reason === 'credentials_unavailable' || this.details.reason === 'identity_provider_unreachable')
      return true;
    return this.code === 'unauthorized' && isProviderUnreachableMessage(this.message);
  }
}

export function isBubbleApiError(value: unknown): value is BubbleApiError {
  return value instanceof BubbleApiError;
}

/**
 * Rebuilds the error of a non-2xx answer from its status and body text. A body that is not the
 * protocol's error body falls back to the code the status maps to.
 */
export function errorFromResponse(status: number, bodyText: string, retryAfterSeconds?: number): BubbleApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const body = ErrorBodySchema.safeParse(parsed);
  const details: Record<string, unknown> = body.success ? { ...body.data.error.details } : {};
  if (retryAfterSeconds !== undefined) details.retryAfterSeconds = retryAfterSeconds;
  if (body.success) {
    const code = body.data.error.code;
    return new BubbleApiError({
      code,
      status,
      retryable: ERROR_CATALOGUE[code].retryable,
      message: body.data.error.message,
      details,
    });
  }
  const code = errorCodeForStatus(status);
  const snippet = bodyText.trim().slice(0, 200);
  return new BubbleApiError({
    code,
    status,
    retryable: ERROR_CATALOGUE[code].retryable || status >= 500,
    message: `HTTP ${status}${snippet ? `: ${snippet}` : ' with an empty body'}`,
    details,
  });
}

/** Parses a `Retry-After` header (seconds, or an HTTP date) into seconds from `nowMs`. */
export function parseRetryAfter(header: string | null, nowMs: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(header);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - nowMs) / 1000);
}
