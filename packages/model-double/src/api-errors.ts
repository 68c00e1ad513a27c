import type { ErrorStatus } from './script.js';

/**
 * The Messages API's error catalogue, as the double answers it: HTTP status,
 * error `type`, and the real API's default message. One place builds bodies.
 */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

export interface ApiErrorEntry {
  readonly type: ApiErrorType;
  readonly message: string;
  /** Whether the real API's clients retry it. */
  readonly retryable: boolean;
}

export const API_ERRORS: Readonly<Record<ErrorStatus, ApiErrorEntry>> = Object.freeze({
  400: { type: 'invalid_request_error', message: 'Invalid request', retryable: false },
  401: { type: 'authentication_error', message: 'invalid x-api-key', retryable: true },
  403: {
    type: 'permission_error',
    message: 'Your API key does not have permission to use the specified resource.',
    retryable: false,
  },
  404: { type: 'not_found_error', message: 'Not found', retryable: false },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.', retryable: false },
  429: {
    type: 'rate_limit_error',
    message:
      'This request would exceed the rate limit for your organization of 50 requests per minute. ' +
      'For details, refer to: https://docs.claude.com/en/api/rate-limits. ' +
      'You can see the response headers for current usage. Please reduce the prompt length or the ' +
      'maximum tokens requested, or try again later. You may also contact sales at ' +
      'https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.',
    retryable: true,
  },
  500: { type: 'api_error', message: 'Internal server error', retryable: true },
  529: { type: 'overloaded_error', message: 'Overloaded', retryable: true },
});

export interface ApiErrorBody {
  type: 'error';
  error: { type: ApiErrorType; message: string };
  request_id: string;
}

export function apiErrorBody(status: ErrorStatus, requestId: string, message?: string): ApiErrorBody {
  const entry = API_ERRORS[status];
  return { type: 'error', error: { type: entry.type, message: message ?? entry.message }, request_id: requestId };
}

/**
 * Headers the real API sends with a 429: `retry-after` and the
 * `anthropic-ratelimit-*` limits with their reset times (RFC 3339).
 */
export function rateLimitHeaders(retryAfterSeconds: number, now: Date): Record<string, string> {
  const reset = new Date(now.getTime() + retryAfterSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    'retry-after': String(retryAfterSeconds),
    'anthropic-ratelimit-requests-limit': '50',
    'anthropic-ratelimit-requests-remaining': '0',
    'anthropic-ratelimit-requests-reset': reset,
    'anthropic-ratelimit-tokens-limit': '40000',
    'anthropic-ratelimit-tokens-remaining': '0',
    'anthropic-ratelimit-tokens-reset': reset,
    'anthropic-ratelimit-input-tokens-limit': '40000',
    'anthropic-ratelimit-input-tokens-remaining': '0',
    'anthropic-ratelimit-input-tokens-reset': reset,
    'anthropic-ratelimit-output-tokens-limit': '8000',
    'anthropic-ratelimit-output-tokens-remaining': '0',
    'anthropic-ratelimit-output-tokens-reset': reset,
  };
}
