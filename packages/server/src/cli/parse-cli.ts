import { parseArgs } from 'node:util';
import { PRINCIPAL_ID_PATTERN } from '@bubble/protocol';
import { z } from 'zod';

export const USAGE = `usage:
  bubble-server serve [--host 127.0.0.1] [--port 7777] [--data ./data] [--log-level info]
                      [--rate-limit N [--rate-limit-burst B]] [--web-root DIR]
                      [--max-connections N] [--max-connections-per-address N]
  bubble-server principal create-human <id> [--display-name NAME] [--data ./data]

  --data DIR         folder of the SQLite database (created if missing; default ./data)
  --database URL     postgres://… (not built yet: use --data)
  --log-level LEVEL  fatal, error, warn, info, debug, trace or silent (logs go to stderr)
  --rate-limit N     at most N requests per second per principal (429 over it; default: no limit)
  --rate-limit-burst B  requests a principal may make at once (default 2×N, at least 1)
  --web-root DIR     serve a built web app from DIR at / (the API under /v1 always wins)
  --max-connections N              open connections in all (default 4096; past it new ones get 429)
  --max-connections-per-address N  open connections from one client address (default 256)
`;

const LogLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const StorageSchema = z
  .object({ data: z.string().min(1).optional(), database: z.string().min(1).optional() })
  .check((ctx) => {
    if (ctx.value.data !== undefined && ctx.value.database !== undefined) {
      ctx.issues.push({ code: 'custom', message: 'use either --data or --database, not both', input: ctx.value });
    }
  });

const ServeSchema = z.object({
  command: z.literal('serve'),
  host: z.string().min(1, '--host must not be empty').default('127.0.0.1'),
  port: z.coerce
    .number({ error: '--port must be a number' })
    .int('--port must be a whole number')
    .min(0, '--port must be between 0 and 65535')
    .max(65535, '--port must be between 0 and 65535')
    .default(7777),
  logLevel: LogLevelSchema.default('info'),
  rateLimit: z.coerce.number({ error: '--rate-limit must be a number' }).positive('--rate-limit must be above 0').optional(),
  rateLimitBurst: z.coerce
    .number({ error: '--rate-limit-burst must be a number' })
    .int('--rate-limit-burst must be a whole number')
    .min(1, '--rate-limit-burst must be at least 1')
    .optional(),
  webRoot: z.string().min(1, '--web-root must not be empty').optional(),
  maxConnections: z.coerce.number({ error: '--max-connections must be a number' }).int('--max-connections must be a whole number').min(1, '--max-connections must be at least 1').optional(),
  maxConnectionsPerAddress: z.coerce
    .number({ error: '--max-connections-per-address must be a number' })
    .int('--max-connections-per-address must be a whole number')
    .min(1, '--max-connections-per-address must be at least 1')
    .optional(),
  storage: StorageSchema,
}).check((ctx) => {
  if (ctx.value.rateLimitBurst !== undefined && ctx.value.rateLimit === undefined) {
    ctx.issues.push({ code: 'custom', message: '--rate-limit-burst needs --rate-limit', input: ctx.value });
  }
});

const CreateHumanSchema = z.object({
  command: z.literal('create-human'),
  principalId: z.string().regex(PRINCIPAL_ID_PATTERN, `<id> must match ${PRINCIPAL_ID_PATTERN.source}`),
  displayName: z.string().trim().min(1, '--display-name must not be empty').max(200).optional(),
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});

export type ServeCommand = z.infer<typeof ServeSchema>;
export type CreateHumanCommand = z.infer<typeof CreateHumanSchema>;
export type CliCommand = ServeCommand | CreateHumanCommand | { command: 'help' };
export type CliParse = { ok: true; value: CliCommand } | { ok: false; errors: string[] };

/** Parses the command line into one validated, frozen command, or every problem in words. */
export function parseCli(argv: string[]): CliParse {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        data: { type: 'string' },
        database: { type: 'string' },
        'display-name': { type: 'string' },
        'log-level': { type: 'string' },
        'rate-limit': { type: 'string' },
        'rate-limit-burst': { type: 'string' },
        'max-connections': { type: 'string' },
        'max-connections-per-address': { type: 'string' },
        'web-root': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { ok: false, errors: [(error as Error).message] };
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { ok: true, value: { command: 'help' } };
  const storage = { data: values.data, database: values.database };
  const [first, second, ...rest] = positionals;
  let raw: unknown;
  let schema: z.ZodType<ServeCommand> | z.ZodType<CreateHumanCommand>;
  if (first === 'serve' && second === undefined) {
    if (values['display-name'] !== undefined) return { ok: false, errors: ['--display-name belongs to "principal create-human"'] };
    raw = {
      command: 'serve',
      host: values.host,
      port: values.port,
      logLevel: values['log-level'],
      rateLimit: values['rate-limit'],
      rateLimitBurst: values['rate-limit-burst'],
      webRoot: values['web-root'],
      maxConnections: values['max-connections'],
      maxConnectionsPerAddress: values['max-connections-per-address'],
      storage,
    };
    schema = ServeSchema;
  } else if (first === 'principal' && second === 'create-human') {
    if (rest.length !== 1) return { ok: false, errors: ['"principal create-human" needs exactly one <id>'] };
    if (values.host !== undefined || values.port !== undefined || values['rate-limit'] !== undefined) {
      return { ok: false, errors: ['--host, --port and --rate-limit belong to "serve"'] };
    }
    if (values['web-root'] !== undefined) {
      return { ok: false, errors: ['--web-root belongs to "serve"'] };
    }
    raw = { command: 'create-human', principalId: rest[0], displayName: values['display-name'], logLevel: values['log-level'], storage };
    schema = CreateHumanSchema;
  } else {
    return { ok: false, errors: [`unknown command "${positionals.join(' ')}"`] };
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    return { ok: false, errors: result.error.issues.map((issue) => issue.message) };
  }
  return { ok: true, value: Object.freeze(result.data) };
}
