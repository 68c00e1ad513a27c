import { BubbleError } from '../../errors/bubble-error.js';

import { StoreUnavailableError } from '../store-errors.js';

export { StoreUnavailableError };

/** Node socket errors that mean the connection, not the request, failed. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

/**
 * SQLSTATEs after which the same request may succeed later: connection exceptions (class 08),
 * the server ending or refusing sessions (57P01–57P03, 25P03 for one idle in its transaction for
 * too long, 53300), a statement timeout (57014), and the transaction conflicts PostgreSQL resolves
 * by aborting one side (40001, 40P01).
 */
const RETRYABLE_STATES = new Set(['57P01', '57P02', '57P03', '25P03', '53300', '57014', '40001', '40P01']);

/** What node-postgres rejects a query with when `query_timeout` passed without an answer (`postgres-pool.ts`). */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

const CONNECTION_MESSAGES = [
  QUERY_TIMEOUT_MESSAGE,
  'Connection terminated',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated unexpectedly',
];

/** Whether the error says the database could not serve (now), rather than that the request was wrong. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || RETRYABLE_STATES.has(code) || code.startsWith('08')) return true;
  }
  return CONNECTION_MESSAGES.some((text) => error.message.includes(text));
}

/** Whether a connection that failed this way is gone (so nothing sent on it can have committed after it). */
export function isConnectionLost(error: unknown): boolean {
  if (!isUnavailable(error)) return false;
  const code = (error as { code?: unknown }).code;
  return code !== '57014' && code !== '40001' && code !== '40P01' && code !== '53300';
}

/**
 * Whether the database answered nothing within the client's query timeout. The connection is
 * given up (it may be half-open, or its backend stopped), and the request is not sent again: it
 * has waited long enough, and a database that answers nobody would only make it wait as long
 * once more. It is answered 503.
 */
export function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === QUERY_TIMEOUT_MESSAGE;
}

/**
 * Whether a transaction lost a race with another one that has settled by now: a unique violation
 * (another instance inserted the same principal, subject or keyed thread first; the check waits for
 * it to commit) or a deadlock or serialization failure. Run again, the job decides against what won.
 */
export function isRaceLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === '40P01' || code === '40001';
}

/** What a caller of the store sees: a BubbleError as it is, an outage as a 503, anything else unchanged. */
export function toStoreError(error: unknown): unknown {
  if (error instanceof BubbleError) return error;
  return isUnavailable(error) ? new StoreUnavailableError(error) : error;
}
