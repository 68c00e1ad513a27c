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

/** What node-postgres rejects a query with when `query_timeout` passed without an answer (`postgres-pool.ts`). */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** What node-postgres says when a connection failed, for errors that carry no code. */
const CONNECTION_MESSAGES = [
  QUERY_TIMEOUT_MESSAGE,
  'Connection terminated',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated unexpectedly',
];

/** A SQLSTATE: five digits or capitals (class, then condition). Node's socket codes are longer, except EPIPE. */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * What a failure of the database means for the request, and so whether it may be sent again:
 *
 * - `connection_lost`: the connection failed, not the request (a socket error, connection
 *   exceptions of class 08, the server ending the session: 57P01–57P03, 25P03 for one idle in its
 *   transaction too long). Nothing sent on it can commit afterwards: run once more, on a new one.
 * - `query_timeout`: no answer within the client's query timeout. The connection is given up, but
 *   the request is not sent again (it has waited long enough): 503.
 * - `busy`: the database refused for now (57014 statement timeout, 53300 too many connections): 503.
 * - `serialization`: PostgreSQL aborted one side of a conflict (40001, 40P01): run once more; 503 after.
 * - `duplicate`: a unique violation (23505), which here means another instance inserted the same
 *   principal, subject or keyed thread first (the check waits for it to commit): run once more, and
 *   the job decides against what won (a 409, or the row that is there).
 * - `permanent`: anything else, every other data exception (22xxx: a NUL PostgreSQL's text refuses),
 *   constraint violation (23xxx), syntax or access rule (42xxx) above all. The request itself is
 *   wrong, or the server is: the same request would fail the same way, so it is never run again.
 *
 * An error with a SQLSTATE is judged by it alone: its message may quote the offending input, so
 * a message that reads like a lost connection does not make it one.
 */
export type PgErrorKind = 'connection_lost' | 'query_timeout' | 'busy' | 'serialization' | 'duplicate' | 'permanent';

const KIND_BY_STATE: ReadonlyMap<string, PgErrorKind> = new Map([
  ['57P01', 'connection_lost'],
  ['57P02', 'connection_lost'],
  ['57P03', 'connection_lost'],
  ['25P03', 'connection_lost'],
  ['57014', 'busy'],
  ['53300', 'busy'],
  ['40001', 'serialization'],
  ['40P01', 'serialization'],
  ['23505', 'duplicate'],
]);

/** See `PgErrorKind`. Pure. */
export function pgErrorKind(error: unknown): PgErrorKind {
  if (!(error instanceof Error)) return 'permanent';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return 'connection_lost';
    if (SQLSTATE.test(code))
      return KIND_BY_STATE.get(code) ?? (code.startsWith('08') ? 'connection_lost' : 'permanent');
  }
  if (error.message === QUERY_TIMEOUT_MESSAGE) return 'query_timeout';
  return CONNECTION_MESSAGES.some((text) => error.message.includes(text)) ? 'connection_lost' : 'permanent';
}

/** Whether the error says the database could not serve (now), rather than that the request was wrong: a 503. */
export function isUnavailable(error: unknown): boolean {
  const kind = pgErrorKind(error);
  return kind !== 'permanent' && kind !== 'duplicate';
}

/** Whether a connection that failed this way is gone (so nothing sent on it can have committed after it). */
export function isConnectionLost(error: unknown): boolean {
  const kind = pgErrorKind(error);
  return kind === 'connection_lost' || kind === 'query_timeout';
}

/**
 * Whether the database answered nothing within the client's query timeout. The connection is
 * given up (it may be half-open, or its backend stopped), and the request is not sent again: it
 * has waited long enough, and a database that answers nobody would only make it wait as long
 * once more. It is answered 503.
 */
export function isQueryTimeout(error: unknown): boolean {
  return pgErrorKind(error) === 'query_timeout';
}

/**
 * Whether a transaction lost a race with another one that has settled by now: a unique violation
 * (another instance inserted the same principal, subject or keyed thread first; the check waits for
 * it to commit) or a deadlock or serialization failure. Run again, the job decides against what won.
 */
export function isRaceLost(error: unknown): boolean {
  const kind = pgErrorKind(error);
  return kind === 'duplicate' || kind === 'serialization';
}

/** What a caller of the store sees: a BubbleError as it is, an outage as a 503, anything else unchanged. */
export function toStoreError(error: unknown): unknown {
  if (error instanceof BubbleError) return error;
  return isUnavailable(error) ? new StoreUnavailableError(error) : error;
}
