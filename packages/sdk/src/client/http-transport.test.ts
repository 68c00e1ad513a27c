import { describe, expect, it } from 'vitest';
import { BubbleApiError, type BubbleErrorCode } from './bubble-api-error.js';
import { mayRetry, type RetryMode } from './http-transport.js';

function error(code: BubbleErrorCode, status: number, details: Record<string, unknown> = {}): BubbleApiError {
  return new BubbleApiError({ code, status, retryable: false, message: code, details });
}

describe('mayRetry', () => {
  it.each<[string, BubbleApiError, RetryMode, boolean]>([
    ['timeout, idempotent', error('timeout', 0), 'idempotent', true],
    ['timeout, unsafe', error('timeout', 0), 'unsafe', false],
    ['reset, idempotent', error('network', 0, { connectionRefused: false }), 'idempotent', true],
    ['reset, unsafe', error('network', 0, { connectionRefused: false }), 'unsafe', false],
    ['refused, unsafe (never reached the server)', error('network', 0, { connectionRefused: true }), 'unsafe', true],
    ['500, idempotent', error('internal', 500), 'idempotent', true],
    ['502, unsafe', error('internal', 502), 'unsafe', false],
    ['429, unsafe (refused, not acted on)', error('rate_limited', 429), 'unsafe', true],
    ['429, idempotent', error('rate_limited', 429), 'idempotent', true],
    ['400', error('invalid_request', 400), 'idempotent', false],
    ['401', error('unauthorized', 401), 'idempotent', false],
    ['409', error('conflict', 409), 'idempotent', false],
    ['abort', error('aborted', 0), 'idempotent', false],
    ['unreadable 200', error('invalid_response', 200), 'idempotent', false],
  ])('%s -> %s', (_label, failure, mode, expected) => {
    expect(mayRetry(failure, mode)).toBe(expected);
  });
});
