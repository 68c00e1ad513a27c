import { CLOSE_CODES, ERROR_CATALOGUE, type ErrorFrame } from '@bubble/protocol';
import { BubbleApiError } from '../client/bubble-api-error.js';

/**
 * The typed errors the live connection hands its iterables: rebuilt from the wire (an `error`
 * frame, a close code) the way `errorFromResponse` rebuilds an HTTP answer.
 */

/** An `error` frame the server sent for one subscription. */
export function errorFromErrorFrame(frame: ErrorFrame): BubbleApiError {
  return new BubbleApiError({
    code: frame.error.code,
    status: ERROR_CATALOGUE[frame.error.code].status,
    // Only refusals that another try cannot change reach a consumer: the live connection
    // subscribes again by itself after a passing one (`isRetryableErrorCode`).
    retryable: false,
    message: frame.error.message,
    details: { ...frame.error.details, source: 'websocket' },
  });
}

/** The server closed the socket with 4001 (bearer refused) or 4003 (credential revoked). */
export function refusedCredentialError(code: number, reason: string): BubbleApiError {
  const revoked = code === CLOSE_CODES.credentialRevoked;
  return new BubbleApiError({
    code: 'unauthorized',
    status: 401,
    retryable: false,
    message: revoked
      ? 'the credential was revoked (WebSocket close 4003)'
      : `the server did not accept the credential (WebSocket close 4001${reason ? `: ${reason}` : ''})`,
    details: { closeCode: code, reason: revoked ? 'credential_revoked' : 'not_authenticated' },
  });
}

/** The socket factory refused the URL: nothing a retry would fix. */
export function unopenableSocketError(wsUrl: string, error: unknown): BubbleApiError {
  return new BubbleApiError({
    code: 'network',
    status: 0,
    retryable: false,
    message: `cannot open ${wsUrl}: ${String(error)}`,
    cause: error,
  });
}
