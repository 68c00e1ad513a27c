/**
 * claude-scuba's one error catalogue. Every error this package throws on
 * purpose is a `ScubaError` with a code from this table; the README lists
 * every code (a test checks that).
 */
export const SCUBA_ERROR_CODES = {
  config_unreadable: {
    retryable: false,
    description: 'the config file cannot be read or is not valid JSON',
  },
  config_invalid: {
    retryable: false,
    description: 'the config has problems (each one is listed in `problems`)',
  },
  principal_mismatch: {
    retryable: false,
    description: 'the Bubble token authenticates a different principal than bubble.principalId',
  },
  approval_duplicate: {
    retryable: false,
    description: 'a tool call was parked twice under the same toolCallId',
  },
  subagent_duplicate: {
    retryable: false,
    description: 'a sub-agent was opened twice under the same toolCallId',
  },
  run_state: {
    retryable: false,
    description: 'a run was begun while another is open, or finished while none is',
  },
} as const satisfies Record<string, { retryable: boolean; description: string }>;

export type ScubaErrorCode = keyof typeof SCUBA_ERROR_CODES;

export class ScubaError extends Error {
  readonly code: ScubaErrorCode;
  readonly retryable: boolean;
  /** For config errors: every problem, in plain words. */
  readonly problems: readonly string[];

  constructor(code: ScubaErrorCode, message: string, options?: { cause?: unknown; problems?: readonly string[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ScubaError';
    this.code = code;
    this.retryable = SCUBA_ERROR_CODES[code].retryable;
    this.problems = Object.freeze([...(options?.problems ?? [])]);
  }
}

export function isScubaError(value: unknown): value is ScubaError {
  return value instanceof ScubaError;
}
