/**
 * The Discord bot's one error catalogue. Every error this package throws on
 * purpose is a `DiscordBotError` with a code from this table; the README
 * lists every code (a test checks that).
 */
export const DISCORD_BOT_ERROR_CODES = {
  config_unreadable: { retryable: false, description: 'the config file cannot be read or is not valid JSON' },
  config_invalid: { retryable: false, description: 'the config has problems (each one is listed in `problems`)' },
  store_unusable: {
    retryable: false,
    description: 'the state database cannot be opened, or was written by a newer bubble-discord',
  },
  discord_login_failed: {
    retryable: false,
    description: 'Discord refused the bot token, or the gateway could not be reached',
  },
} as const satisfies Record<string, { retryable: boolean; description: string }>;

export type DiscordBotErrorCode = keyof typeof DISCORD_BOT_ERROR_CODES;

export class DiscordBotError extends Error {
  readonly code: DiscordBotErrorCode;
  readonly retryable: boolean;
  /** For config errors: every problem, in plain words. */
  readonly problems: readonly string[];

  constructor(code: DiscordBotErrorCode, message: string, options?: { cause?: unknown; problems?: readonly string[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DiscordBotError';
    this.code = code;
    this.retryable = DISCORD_BOT_ERROR_CODES[code].retryable;
    this.problems = Object.freeze([...(options?.problems ?? [])]);
  }
}

export function isDiscordBotError(value: unknown): value is DiscordBotError {
  return value instanceof DiscordBotError;
}
