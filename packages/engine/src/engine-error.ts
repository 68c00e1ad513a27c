/**
 * The engine's one error catalogue. Every error this package throws on purpose
 * is an `EngineError` with a code from this table; the README lists every code
 * (a test checks that).
 */
export const ENGINE_ERROR_CODES = {
  invalid_child_env: {
    retryable: false,
    description: 'buildChildEnv got options it cannot turn into a safe child environment',
  },
  prompt_stream_ended: {
    retryable: false,
    description: 'a message was pushed into a PromptStream after end()',
  },
  prompt_stream_reused: {
    retryable: false,
    description: 'a PromptStream was iterated a second time (it has exactly one reader: the SDK)',
  },
  live_query_ended: {
    retryable: false,
    description: 'push/interrupt on a LiveQuery whose CLI has already ended',
  },
  live_query_messages_reused: {
    retryable: false,
    description: 'the messages of a LiveQuery were read a second time, raw or narrowed (one reader only)',
  },
  run_queue_cancelled: {
    retryable: true,
    description: 'a RunQueue waiter was aborted before it got a slot',
  },
  run_queue_duplicate_id: {
    retryable: false,
    description: 'a RunQueue ticket id was used while another ticket with that id is still queued or running',
  },
  run_queue_unknown_ticket: {
    retryable: false,
    description: 'a RunQueue slot was handed over from a ticket that holds none',
  },
  run_queue_invalid_size: {
    retryable: false,
    description: 'RunQueue size must be a positive integer',
  },
} as const satisfies Record<string, { retryable: boolean; description: string }>;

export type EngineErrorCode = keyof typeof ENGINE_ERROR_CODES;

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  readonly retryable: boolean;

  constructor(code: EngineErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EngineError';
    this.code = code;
    this.retryable = ENGINE_ERROR_CODES[code].retryable;
  }
}

export function isEngineError(value: unknown): value is EngineError {
  return value instanceof EngineError;
}
