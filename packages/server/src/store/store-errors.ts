import { BubbleError } from '../errors/bubble-error.js';

/**
 * 503 for a database that cannot be reached or is shutting a connection down: the request may
 * well succeed if sent again (the pool reconnects), so it carries a `Retry-After`. With a
 * `message`, a store that cannot go on (SQLite after a failed sync) says what the operator must
 * do instead, without one. The catalogue has no 503 code yet, so this carries `internal` (500's
 * code, also retryable) with the status 503.
 */
export class StoreUnavailableError extends BubbleError {
  constructor(cause: unknown, message?: string) {
    super(
      'internal',
      message ?? 'the database is unavailable; try again',
      {},
      message === undefined ? { 'retry-after': '1' } : {},
    );
    this.name = 'StoreUnavailableError';
    this.cause = cause;
  }

  override get status(): number {
    return 503;
  }
}
