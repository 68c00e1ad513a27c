import { ERROR_CATALOGUE, type ErrorCode } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { BubbleApiError, type BubbleErrorCode } from './bubble-api-error.js';
import { classifyClose, isPermanentFailure, isRetryableErrorCode } from './retry-classification.js';

function error(code: BubbleErrorCode, retryable = false): BubbleApiError {
  return new BubbleApiError({ code, status: 0, retryable, message: code });
}

describe('classifyClose', () => {
  it.each<[number, string, ReturnType<typeof classifyClose>]>([
    [4001, 'not authenticated', 'refused'],
    [4001, '', 'refused'],
    [4001, 'the identity provider https://id.example.com/ could not be reached to check this token', 'reconnect'],
    [4003, 'credential revoked', 'revoked'],
    [4008, 'slow consumer', 'reconnect'],
    [1006, '', 'reconnect'],
    [1001, 'server shutting down', 'reconnect'],
    [1013, 'no bearer for now', 'reconnect'],
    [1009, 'frame too large', 'reconnect'],
  ])('%i %j -> %s', (code, reason, verdict) => {
    expect(classifyClose(code, reason)).toBe(verdict);
  });
});

describe('isPermanentFailure', () => {
  it.each<[BubbleErrorCode, boolean]>([
    ['unauthorized', true],
    ['forbidden', true],
    ['not_found', true],
    ['invalid_request', true],
    ['conflict', true],
    ['payload_too_large', true],
    ['internal', false],
    ['rate_limited', false],
    ['timeout', false],
    ['network', false],
    ['invalid_response', false],
    ['aborted', false],
  ])('%s -> %s', (code, permanent) => {
    expect(isPermanentFailure(error(code))).toBe(permanent);
  });

  it('judges by code, not by the flag that says whether resending the same request is safe', () => {
    expect(isPermanentFailure(error('internal', false))).toBe(false);
    expect(isPermanentFailure(error('forbidden', true))).toBe(true);
  });

  it('counts anything that is not a BubbleApiError as passing', () => {
    expect(isPermanentFailure(new Error('events 3..4 could not be read'))).toBe(false);
    expect(isPermanentFailure(undefined)).toBe(false);
  });
});

describe('isRetryableErrorCode', () => {
  it('is the catalogue, and the exact opposite of a permanent failure for every wire code', () => {
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      expect(isRetryableErrorCode(code)).toBe(ERROR_CATALOGUE[code].retryable);
      expect(isRetryableErrorCode(code)).toBe(!isPermanentFailure(error(code)));
    }
  });
});
