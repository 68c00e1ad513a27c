import { z } from 'zod';

/** Every error code of the wire contract (protocol.md, "Errors"). */
export const ErrorCodeSchema = z.enum([
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'rate_limited',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

export interface ErrorCodeInfo {
  /** The HTTP status the code is answered with. */
  readonly status: number;
  /** Whether the same request may succeed if it is simply sent again later. */
  readonly retryable: boolean;
}

/** The one catalogue of codes: status and retry safety. Servers answer with it, clients rebuild errors from it. */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, ErrorCodeInfo>> = Object.freeze({
  invalid_request: { status: 400, retryable: false },
  unauthorized: { status: 401, retryable: false },
  forbidden: { status: 403, retryable: false },
  not_found: { status: 404, retryable: false },
  conflict: { status: 409, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  rate_limited: { status: 429, retryable: true },
  internal: { status: 500, retryable: true },
});

export const ErrorObjectSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  details: z.record(z.string(), z.unknown()).default({}),
});
export type ErrorObject = z.infer<typeof ErrorObjectSchema>;

/** The body of every non-2xx answer. */
export const ErrorBodySchema = z.object({ error: ErrorObjectSchema });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** The code a status maps back to, for clients that receive a body they cannot parse. */
export function errorCodeForStatus(status: number): ErrorCode {
  for (const code of ErrorCodeSchema.options) {
    if (ERROR_CATALOGUE[code].status === status) return code;
  }
  return status >= 500 ? 'internal' : 'invalid_request';
}
