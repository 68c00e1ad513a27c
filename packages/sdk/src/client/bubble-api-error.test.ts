import { describe, expect, it } from 'vitest';
import { BubbleApiError, errorFromResponse, parseRetryAfter } from './bubble-api-error.js';

describe('errorFromResponse', () => {
  it.each([
    [
      404,
      { error: { code: 'not_found', message: 'thread th_x not found', details: { threadId: 'th_x' } } },
      'not_found',
      false,
      'thread th_x not found',
    ],
    [401, { error: { code: 'unauthorized', message: 'bad token' } }, 'unauthorized', false, 'bad token'],
    [429, { error: { code: 'rate_limited', message: 'slow down', details: {} } }, 'rate_limited', true, 'slow down'],
    [500, { error: { code: 'internal', message: 'boom', details: {} } }, 'internal', true, 'boom'],
    [409, { error: { code: 'conflict', message: 'taken', details: {} } }, 'conflict', false, 'taken'],
  ])('rebuilds %i from the protocol error body', (status, body, code, retryable, message) => {
    const error = errorFromResponse(status, JSON.stringify(body));
    expect(error).toBeInstanceOf(BubbleApiError);
    expect({ code: error.code, status: error.status, retryable: error.retryable, message: error.message }).toEqual({
      code,
      status,
      retryable,
      message,
    });
  });

  it('keeps the details of the body', () => {
    const error = errorFromResponse(
      404,
      JSON.stringify({ error: { code: 'not_found', message: 'x', details: { threadId: 'th_1' } } }),
    );
    expect(error.details).toEqual({ threadId: 'th_1' });
  });

  it.each([
    [502, '<html>Bad Gateway</html>', 'internal', true],
    [503, '', 'internal', true],
    [404, 'Not Found', 'not_found', false],
    [413, 'too big', 'payload_too_large', false],
    [418, 'teapot', 'invalid_request', false],
    [401, '{"unexpected":true}', 'unauthorized', false],
  ])('falls back to the status for %i with a body that is not the error body', (status, body, code, retryable) => {
    const error = errorFromResponse(status, body);
    expect({ code: error.code, status: error.status, retryable: error.retryable }).toEqual({ code, status, retryable });
    expect(error.message).toContain(`HTTP ${status}`);
  });

  it('records Retry-After in the details', () => {
    const error = errorFromResponse(
      429,
      JSON.stringify({ error: { code: 'rate_limited', message: 'later', details: {} } }),
      3,
    );
    expect(error.details.retryAfterSeconds).toBe(3);
  });

  it('marks only unauthorized as an auth error', () => {
    expect(errorFromResponse(401, '').isAuthError).toBe(true);
    expect(errorFromResponse(403, '').isAuthError).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-29T10:00:00Z');
  it.each([
    [null, undefined],
    ['', undefined],
    ['0', 0],
    ['7', 7],
    ['Sun, 29 Nov 2026 10:00:05 GMT', 5],
    ['Sun, 29 Nov 2026 09:59:00 GMT', 0],
    ['soon', undefined],
  ])('parses %j', (header, seconds) => {
    expect(parseRetryAfter(header, now)).toBe(seconds);
  });
});

describe('isAuthUnavailable: the server could not check the credential, it did not refuse it', () => {
  const body = (message: string) => JSON.stringify({ error: { code: 'unauthorized', message } });
  it.each([
    [
      'the identity provider https://tenant.auth0.com/ could not be reached to check this token (fetch failed); try again shortly',
      true,
    ],
    [
      'the identity provider http://127.0.0.1:9/ could not be reached to check this token (its JWKS did not answer in time); try again shortly',
      true,
    ],
    ['unknown or revoked token', false],
    ['the JWT has expired', false],
    ['invalid: the identity provider https://x/ could not be reached', false],
  ])('%s → %s', (message, expected) => {
    expect(errorFromResponse(401, body(message)).isAuthUnavailable).toBe(expected);
  });
  it("by the server's details.reason, whatever the wording", () => {
    const marked = JSON.stringify({
      error: {
        code: 'unauthorized',
        message: 'the provider is away',
        details: { reason: 'identity_provider_unreachable' },
      },
    });
    expect(errorFromResponse(401, marked).isAuthUnavailable).toBe(true);
  });
  it('only for 401 unauthorized', () => {
    expect(
      errorFromResponse(
        403,
        JSON.stringify({
          error: { code: 'forbidden', message: 'the identity provider https://x/ could not be reached' },
        }),
      ).isAuthUnavailable,
    ).toBe(false);
  });
});
