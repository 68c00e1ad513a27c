import { CLOSE_CODES, ERROR_CATALOGUE, type ErrorCode } from '@bubble/protocol';
import { isBubbleApiError, type BubbleApiError } from './bubble-api-error.js';
import { isProviderUnreachableMessage } from './credentials.js';

/**
 * Every rule of the sdk that says whether a failure is worth another try, in one place: HTTP
 * requests (`HttpTransport`), the live connection's closes and refused subscribes
 * (`BubbleLive`), and following a thread (`ThreadRunner`). Pure functions of the failure; the
 * callers own the timers and the backoff. The protocol's error catalogue is the one table of
 * which wire codes are passing (`retryable`) and which are answers that a retry cannot change.
 */

/**
 * How a request may be retried:
 * - `idempotent`: sending it twice has the effect of sending it once (GET, PUT, DELETE, an append
 *   whose events all carry a `clientEventId`, a thread creation with a key). Retried after any
 *   retryable failure, including uncertain ones (timeout, reset, 5xx).
 * - `unsafe`: a second send could act twice. Retried only when the first certainly did not
 *   act: a refused connection, or a 429.
 */
export type RetryMode = 'idempotent' | 'unsafe';

/** Whether a failed HTTP attempt may be sent again under the request's retry mode. */
export function mayRetry(error: BubbleApiError, mode: RetryMode): boolean {
  if (error.code === 'rate_limited') return true;
  if (error.code === 'network' && error.details.connectionRefused === true) return true;
  if (mode === 'unsafe') return false;
  return error.code === 'timeout' || error.code === 'network' || error.code === 'internal' || error.status >= 500;
}

/** Whether a wire error code is a passing refusal (`internal`, `rate_limited`): asking again later may succeed. */
export function isRetryableErrorCode(code: ErrorCode): boolean {
  return ERROR_CATALOGUE[code].retryable;
}

/**
 * Whether following a stream again cannot succeed: the server refused the caller or the request
 * (a wire code the catalogue marks as not retryable: `unauthorized`, `forbidden`, `not_found`, …).
 * Judged by code, not by the error's `retryable` flag, which says whether *resending the same
 * request* is safe: a refused subscribe is never resent as is, yet an `internal` one is worth
 * another try. Failures without an answer (`timeout`, `network`) and anything that is not a
 * `BubbleApiError` are passing.
 */
export function isPermanentFailure(error: unknown): boolean {
  if (!isBubbleApiError(error)) return false;
  const entry = (ERROR_CATALOGUE as Partial<Record<string, { retryable: boolean }>>)[error.code];
  return entry !== undefined && !entry.retryable;
}

/**
 * What a WebSocket close means for the live connection:
 * - `refused`: 4001, the server did not accept the bearer. Final, unless the credentials can
 *   renew it (the caller decides: once per refusal).
 * - `revoked`: 4003, the credential was revoked. Final.
 * - `reconnect`: everything else, resumed from the last seq after a backoff: 4008 (slow
 *   consumer), 1006 (a dead link), a server restart, and a 4001 saying the server could not
 *   reach its identity provider (it could not check the bearer, it did not refuse it).
 */
export type CloseVerdict = 'refused' | 'revoked' | 'reconnect';

export function classifyClose(code: number, reason: string): CloseVerdict {
  if (code === CLOSE_CODES.credentialRevoked) return 'revoked';
  if (code === CLOSE_CODES.notAuthenticated) return isProviderUnreachableMessage(reason) ? 'reconnect' : 'refused';
  return 'reconnect';
}
