import { ERROR_CATALOGUE, type ErrorCode } from '@bubble/protocol';

/**
 * The one error class of the server. Anything thrown below the HTTP edge that
 * is not a BubbleError becomes a 500 `internal` whose body says nothing about
 * the cause (the cause is logged, never sent).
 */
export class BubbleError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'BubbleError';
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

export const invalidRequest = (message: string, details?: Record<string, unknown>): BubbleError =>
  new BubbleError('invalid_request', message, details);
export const unauthorized = (
  message = 'missing, unknown or revoked credential',
  details?: Record<string, unknown>,
): BubbleError => new BubbleError('unauthorized', message, details);
export const forbidden = (message: string, details?: Record<string, unknown>): BubbleError =>
  new BubbleError('forbidden', message, details);
export const notFound = (message: string, details?: Record<string, unknown>): BubbleError =>
  new BubbleError('not_found', message, details);
export const conflict = (message: string, details?: Record<string, unknown>): BubbleError =>
  new BubbleError('conflict', message, details);
export const payloadTooLarge = (message: string, details?: Record<string, unknown>): BubbleError =>
  new BubbleError('payload_too_large', message, details);

/** 429 `rate_limited`: `Retry-After` in whole seconds, also in `details.retryAfterSeconds` (what a WebSocket error frame carries). */
export const rateLimited = (message: string, retryAfterSeconds: number): BubbleError =>
  new BubbleError('rate_limited', message, { retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds) });

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: { error: { code: ErrorCode; message: string; details: Record<string, unknown> } };
}

/** The one place that turns any thrown value into the spec's error body. */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof BubbleError) {
    return {
      status: error.status,
      headers: error.headers,
      body: { error: { code: error.code, message: error.message, details: error.details } },
    };
  }
  return {
    status: ERROR_CATALOGUE.internal.status,
    headers: {},
    body: { error: { code: 'internal', message: 'internal error', details: {} } },
  };
}
