import { pino, type Logger } from 'pino';

/** Paths pino blanks in every line, beside `Secret` values (which print as `[secret]` anyway). */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'apiKey',
  '*.apiKey',
  'oauthToken',
  '*.oauthToken',
];

/** JSON lines on stdout by default; `pretty` for local work (pino-pretty, in a worker thread). */
export function createLogger(options: { level: string; pretty: boolean }): Logger {
  const base = {
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[secret]' },
    base: { name: 'claude-scuba' },
  };
  if (!options.pretty) return pino(base);
  return pino({
    ...base,
    transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } },
  });
}
