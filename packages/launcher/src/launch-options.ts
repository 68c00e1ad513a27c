import { parseArgs } from 'node:util';
import { z } from 'zod';

export const USAGE = `usage: npm start [-- --port 7777] [--data ./data] [--host 127.0.0.1]

Runs a Bubble server with the web UI on SQLite under --data, a human "you",
a Claude bot "claude" owned by you, a welcome thread with both, and
claude-scuba for the bot: on Claude when CLAUDE_CODE_OAUTH_TOKEN or
ANTHROPIC_API_KEY is set, otherwise on the offline model double.
It prints one sign-in link. Ctrl-C (SIGINT) or SIGTERM stops everything it
started. One npm start per --data folder: a second one is refused.

environment:
  BUBBLE_LOG_LEVEL   the launcher's and server's log level (default warn)
  BUBBLE_LOG_FORMAT  pretty (default on a terminal) or json (default otherwise)
`;

const OptionsSchema = z.object({
  port: z.coerce
    .number({ error: '--port must be a number' })
    .int('--port must be a whole number')
    .min(0, '--port must be between 0 and 65535')
    .max(65535, '--port must be between 0 and 65535')
    .default(7777),
  host: z.string().min(1, '--host must not be empty').default('127.0.0.1'),
  data: z.string().min(1, '--data must not be empty').default('./data'),
});

export type LaunchCli = Readonly<z.infer<typeof OptionsSchema>>;
export type LaunchCliParse =
  | { ok: true; value: LaunchCli }
  | { ok: true; help: true }
  | { ok: false; errors: string[] };

/** argv → validated, frozen options, or every problem in words. */
export function parseLaunchCli(argv: string[]): LaunchCliParse {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        data: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return { ok: false, errors: [(error as Error).message] };
  }
  if (values.help) return { ok: true, help: true };
  const parsed = OptionsSchema.safeParse({ port: values.port, host: values.host, data: values.data });
  if (!parsed.success) return { ok: false, errors: parsed.error.issues.map((i) => i.message) };
  return { ok: true, value: Object.freeze(parsed.data) };
}

/** Which model the bot talks to, from the launcher's environment (read in main.ts only). */
export type ModelMode = 'claude' | 'double';

export function modelModeOf(env: {
  CLAUDE_CODE_OAUTH_TOKEN?: string | undefined;
  ANTHROPIC_API_KEY?: string | undefined;
}): ModelMode {
  return (env.CLAUDE_CODE_OAUTH_TOKEN ?? '') !== '' || (env.ANTHROPIC_API_KEY ?? '') !== '' ? 'claude' : 'double';
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface LaunchEnv {
  readonly mode: ModelMode;
  readonly logLevel: (typeof LEVELS)[number];
  /** `pretty`: pino-pretty lines for a person at a terminal; `json`: one JSON object a line, for a collector. */
  readonly logFormat: 'pretty' | 'json';
}

/** The environment `npm start` reads (main.ts passes process.env), checked once; every problem in words. */
export function parseLaunchEnv(
  env: NodeJS.ProcessEnv,
  logsGoToTerminal: boolean,
): { ok: true; value: LaunchEnv } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const level = env.BUBBLE_LOG_LEVEL === undefined || env.BUBBLE_LOG_LEVEL === '' ? 'warn' : env.BUBBLE_LOG_LEVEL;
  if (!(LEVELS as readonly string[]).includes(level))
    errors.push(`BUBBLE_LOG_LEVEL must be one of ${LEVELS.join(', ')}, not "${level}"`);
  const format =
    env.BUBBLE_LOG_FORMAT === undefined || env.BUBBLE_LOG_FORMAT === ''
      ? logsGoToTerminal
        ? 'pretty'
        : 'json'
      : env.BUBBLE_LOG_FORMAT;
  if (format !== 'pretty' && format !== 'json')
    errors.push(`BUBBLE_LOG_FORMAT must be pretty or json, not "${format}"`);
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: Object.freeze({
      mode: modelModeOf(env),
      logLevel: level as LaunchEnv['logLevel'],
      logFormat: format as LaunchEnv['logFormat'],
    }),
  };
}
