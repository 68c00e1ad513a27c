import { parseArgs } from 'node:util';
import { displayNameSchema, PRINCIPAL_ID_PATTERN } from '@bubble/protocol';
import { z } from 'zod';
import { parseTrustedProxies } from '../domain/client-address.js';
import { DEFAULT_RATE_LIMITS, type RateLimitSetting, type RateLimits } from '../http/rate-limiter.js';
import { burstSeconds, type LimitName } from './usage.js';

export { USAGE } from './usage.js';

/** A rate flag: a number of at least 0, or `off` (0 means off too). */
const rateFlag = (flag: string) =>
  z
    .preprocess(
      (value) => (value === 'off' ? 0 : value === '' ? Number.NaN : value),
      z.coerce.number({ error: `${flag} must be a number or off` }).min(0, `${flag} must be 0 (off) or above`),
    )
    .optional();

const burstFlag = (flag: string) =>
  z.coerce
    .number({ error: `${flag} must be a number` })
    .int(`${flag} must be a whole number`)
    .min(1, `${flag} must be at least 1`)
    .optional();

const RATE_FLAGS = [
  ['requests', 'rateLimit', 'rateLimitBurst', '--rate-limit'],
  ['frames', 'frameRateLimit', 'frameRateLimitBurst', '--frame-rate-limit'],
  ['failedAuth', 'failedAuthLimit', 'failedAuthLimitBurst', '--failed-auth-limit'],
] as const;

const LogLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const DatabaseUrlSchema = z
  .string()
  .min(1, '--database must not be empty')
  .refine((url) => /^postgres(ql)?:\/\/./.test(url), '--database must be a postgres:// or postgresql:// URL');

const StorageSchema = z
  .object({ data: z.string().min(1).optional(), database: DatabaseUrlSchema.optional() })
  .check((ctx) => {
    if (ctx.value.data !== undefined && ctx.value.database !== undefined) {
      ctx.issues.push({ code: 'custom', message: 'use either --data or --database, not both', input: ctx.value });
    }
  });

const wholeFlag = (flag: string, min: number, tooLow: string) =>
  z.coerce
    .number({ error: `${flag} must be a number` })
    .int(`${flag} must be a whole number`)
    .min(min, `${flag} must be ${tooLow}`)
    .optional();

const ServeSchema = z
  .object({
    command: z.literal('serve'),
    host: z.string().min(1, '--host must not be empty').default('127.0.0.1'),
    port: z.coerce
      .number({ error: '--port must be a number' })
      .int('--port must be a whole number')
      .min(0, '--port must be between 0 and 65535')
      .max(65535, '--port must be between 0 and 65535')
      .default(7777),
    logLevel: LogLevelSchema.default('info'),
    rateLimit: rateFlag('--rate-limit'),
    rateLimitBurst: burstFlag('--rate-limit-burst'),
    frameRateLimit: rateFlag('--frame-rate-limit'),
    frameRateLimitBurst: burstFlag('--frame-rate-limit-burst'),
    failedAuthLimit: rateFlag('--failed-auth-limit'),
    failedAuthLimitBurst: burstFlag('--failed-auth-limit-burst'),
    webRoot: z.string().min(1, '--web-root must not be empty').optional(),
    maxConnections: z.coerce
      .number({ error: '--max-connections must be a number' })
      .int('--max-connections must be a whole number')
      .min(1, '--max-connections must be at least 1')
      .optional(),
    maxConnectionsPerAddress: z.coerce
      .number({ error: '--max-connections-per-address must be a number' })
      .int('--max-connections-per-address must be a whole number')
      .min(1, '--max-connections-per-address must be at least 1')
      .optional(),
    oidcIssuer: z.string().min(1, '--oidc-issuer must not be empty').optional(),
    oidcAudience: z.string().min(1, '--oidc-audience must not be empty').optional(),
    oidcClientId: z.string().min(1, '--oidc-client-id must not be empty').optional(),
    configFile: z.string().min(1, '--config must not be empty').optional(),
    pgPoolSize: wholeFlag('--pg-pool-size', 2, 'at least 2'),
    pgStatementTimeoutMs: wholeFlag('--pg-statement-timeout-ms', 0, '0 (no limit) or more'),
    pgIdleInTransactionTimeoutMs: wholeFlag(
      '--pg-idle-in-transaction-timeout-ms',
      0,
      "0 (the database's own setting) or more",
    ),
    /** `--trusted-proxies` (or `BUBBLE_TRUSTED_PROXIES`), checked by `parseCli`: its entries. */
    trustedProxies: z.array(z.string()).optional(),
    storage: StorageSchema,
  })
  .check((ctx) => {
    for (const [value, flag] of [
      [ctx.value.pgPoolSize, '--pg-pool-size'],
      [ctx.value.pgStatementTimeoutMs, '--pg-statement-timeout-ms'],
      [ctx.value.pgIdleInTransactionTimeoutMs, '--pg-idle-in-transaction-timeout-ms'],
    ] as const) {
      if (value !== undefined && ctx.value.storage.database === undefined) {
        ctx.issues.push({ code: 'custom', message: `${flag} needs --database`, input: ctx.value });
      }
    }
    for (const [, rate, burst, flag] of RATE_FLAGS) {
      if (ctx.value[rate] === 0 && ctx.value[burst] !== undefined) {
        ctx.issues.push({ code: 'custom', message: `${flag}-burst needs ${flag} on, not off`, input: ctx.value });
      }
    }
  });

const CreateHumanSchema = z.object({
  command: z.literal('create-human'),
  principalId: z.string().regex(PRINCIPAL_ID_PATTERN, `<id> must match ${PRINCIPAL_ID_PATTERN.source}`),
  displayName: displayNameSchema('--display-name').optional(),
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});

const PrincipalIdArgSchema = z.string().regex(PRINCIPAL_ID_PATTERN, `<id> must match ${PRINCIPAL_ID_PATTERN.source}`);
const ListPrincipalsSchema = z.object({
  command: z.literal('list-principals'),
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});
const MintTokenSchema = z.object({
  command: z.literal('mint-token'),
  principalId: PrincipalIdArgSchema,
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});
const RevokeTokensSchema = z.object({
  command: z.literal('revoke-tokens'),
  principalId: PrincipalIdArgSchema,
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});

const MigrateSchema = z.object({
  command: z.literal('migrate'),
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});
const ExportSchema = z.object({
  command: z.literal('export'),
  file: z.string().min(1, '--file must not be empty').optional(),
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});
const ImportSchema = z.object({
  command: z.literal('import'),
  file: z.string().min(1, '--file must not be empty').optional(),
  logLevel: LogLevelSchema.default('warn'),
  storage: StorageSchema,
});

export type ServeCommand = z.infer<typeof ServeSchema>;
export type MigrateCommand = z.infer<typeof MigrateSchema>;
export type ExportCommand = z.infer<typeof ExportSchema>;
export type ImportCommand = z.infer<typeof ImportSchema>;
/** The operator's commands on a whole database: its schema, and moving it to another. */
export type DatabaseCommand = MigrateCommand | ExportCommand | ImportCommand;
export type CreateHumanCommand = z.infer<typeof CreateHumanSchema>;
export type ListPrincipalsCommand = z.infer<typeof ListPrincipalsSchema>;
export type MintTokenCommand = z.infer<typeof MintTokenSchema>;
export type RevokeTokensCommand = z.infer<typeof RevokeTokensSchema>;
/** The operator's commands on the principals of a database (the server may be running on it). */
export type PrincipalCommand = CreateHumanCommand | ListPrincipalsCommand | MintTokenCommand | RevokeTokensCommand;
export type CliCommand = ServeCommand | PrincipalCommand | DatabaseCommand | { command: 'help' };
export type CliParse = { ok: true; value: CliCommand } | { ok: false; errors: string[] };

const PRINCIPAL_COMMANDS = {
  'create-human': { command: 'create-human', takesId: true, schema: CreateHumanSchema },
  list: { command: 'list-principals', takesId: false, schema: ListPrincipalsSchema },
  'mint-token': { command: 'mint-token', takesId: true, schema: MintTokenSchema },
  'revoke-tokens': { command: 'revoke-tokens', takesId: true, schema: RevokeTokensSchema },
} as const;

/** The flags only `serve` takes. */
const SERVE_ONLY_FLAGS = [
  'host',
  'port',
  'web-root',
  'rate-limit',
  'rate-limit-burst',
  'frame-rate-limit',
  'frame-rate-limit-burst',
  'failed-auth-limit',
  'failed-auth-limit-burst',
  'max-connections',
  'max-connections-per-address',
  'oidc-issuer',
  'oidc-audience',
  'oidc-client-id',
  'config',
  'pg-pool-size',
  'pg-statement-timeout-ms',
  'pg-idle-in-transaction-timeout-ms',
  'trusted-proxies',
] as const;

/**
 * Parses the command line into one validated, frozen command, or every problem in words. `env` gives
 * what a flag may also be set by (`BUBBLE_TRUSTED_PROXIES`); the flag wins.
 */
export function parseCli(argv: string[], env: Readonly<Record<string, string | undefined>> = {}): CliParse {
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
        'frame-rate-limit': { type: 'string' },
        'frame-rate-limit-burst': { type: 'string' },
        'failed-auth-limit': { type: 'string' },
        'failed-auth-limit-burst': { type: 'string' },
        'max-connections': { type: 'string' },
        'max-connections-per-address': { type: 'string' },
        'web-root': { type: 'string' },
        'oidc-issuer': { type: 'string' },
        'oidc-audience': { type: 'string' },
        'oidc-client-id': { type: 'string' },
        config: { type: 'string' },
        'pg-pool-size': { type: 'string' },
        'pg-statement-timeout-ms': { type: 'string' },
        'pg-idle-in-transaction-timeout-ms': { type: 'string' },
        'trusted-proxies': { type: 'string' },
        file: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { ok: false, errors: [(error as Error).message] };
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0 || positionals[0] === 'help')
    return { ok: true, value: { command: 'help' } };
  const storage = { data: values.data, database: values.database };
  const [first, second, ...rest] = positionals;
  let raw: unknown;
  let schema: z.ZodType<CliCommand>;
  const misplacedFile =
    values.file !== undefined && first !== 'export' && first !== 'import'
      ? ['--file belongs to "export" and "import"']
      : [];
  if (first === 'serve' && second === undefined) {
    if (values['display-name'] !== undefined)
      return { ok: false, errors: ['--display-name belongs to "principal create-human"'] };
    if (misplacedFile.length > 0) return { ok: false, errors: misplacedFile };
    const proxiesFlag = values['trusted-proxies'];
    const proxiesText = proxiesFlag ?? env.BUBBLE_TRUSTED_PROXIES;
    let trustedProxies: string[] | undefined;
    if (proxiesText !== undefined) {
      const proxies = parseTrustedProxies(proxiesText);
      if (!proxies.ok) {
        const source = proxiesFlag === undefined ? 'BUBBLE_TRUSTED_PROXIES' : '--trusted-proxies';
        return { ok: false, errors: [`${source}: ${proxies.error}`] };
      }
      trustedProxies = [...proxies.proxies.entries];
    }
    raw = {
      command: 'serve',
      host: values.host,
      port: values.port,
      logLevel: values['log-level'],
      rateLimit: values['rate-limit'],
      rateLimitBurst: values['rate-limit-burst'],
      frameRateLimit: values['frame-rate-limit'],
      frameRateLimitBurst: values['frame-rate-limit-burst'],
      failedAuthLimit: values['failed-auth-limit'],
      failedAuthLimitBurst: values['failed-auth-limit-burst'],
      webRoot: values['web-root'],
      maxConnections: values['max-connections'],
      maxConnectionsPerAddress: values['max-connections-per-address'],
      oidcIssuer: values['oidc-issuer'],
      oidcAudience: values['oidc-audience'],
      oidcClientId: values['oidc-client-id'],
      configFile: values.config,
      pgPoolSize: values['pg-pool-size'],
      pgStatementTimeoutMs: values['pg-statement-timeout-ms'],
      pgIdleInTransactionTimeoutMs: values['pg-idle-in-transaction-timeout-ms'],
      trustedProxies,
      storage,
    };
    schema = ServeSchema;
  } else if (first === 'principal' && second !== undefined && Object.hasOwn(PRINCIPAL_COMMANDS, second)) {
    const spec = PRINCIPAL_COMMANDS[second as keyof typeof PRINCIPAL_COMMANDS];
    if (rest.length !== (spec.takesId ? 1 : 0)) {
      return {
        ok: false,
        errors: [
          spec.takesId ? `"principal ${second}" needs exactly one <id>` : `"principal ${second}" takes no arguments`,
        ],
      };
    }
    if (values.host !== undefined || values.port !== undefined || values['rate-limit'] !== undefined) {
      return { ok: false, errors: ['--host, --port and --rate-limit belong to "serve"'] };
    }
    // --host, --port and --rate-limit were answered together above.
    const serveOnly = SERVE_ONLY_FLAGS.filter((flag) => flag !== 'host' && flag !== 'port' && flag !== 'rate-limit');
    const misplaced = serveOnly.filter((flag) => values[flag] !== undefined);
    if (misplaced.length > 0 || misplacedFile.length > 0) {
      return { ok: false, errors: [...misplaced.map((flag) => `--${flag} belongs to "serve"`), ...misplacedFile] };
    }
    if (second !== 'create-human' && values['display-name'] !== undefined)
      return { ok: false, errors: ['--display-name belongs to "principal create-human"'] };
    raw = {
      command: spec.command,
      principalId: rest[0],
      displayName: values['display-name'],
      logLevel: values['log-level'],
      storage,
    };
    schema = spec.schema;
  } else if ((first === 'migrate' || first === 'export' || first === 'import') && second === undefined) {
    const misplaced: string[] = SERVE_ONLY_FLAGS.filter((flag) => values[flag] !== undefined);
    if (values['display-name'] !== undefined) misplaced.push('display-name');
    if (first === 'migrate' && values.file !== undefined) misplaced.push('file');
    if (misplaced.length > 0) {
      return { ok: false, errors: misplaced.map((flag) => `--${flag} does not belong to "${first}"`) };
    }
    raw = { command: first, file: values.file, logLevel: values['log-level'], storage };
    schema = { migrate: MigrateSchema, export: ExportSchema, import: ImportSchema }[first];
  } else {
    return { ok: false, errors: [`unknown command "${positionals.join(' ')}"`] };
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    return { ok: false, errors: result.error.issues.map((issue) => issue.message) };
  }
  return { ok: true, value: Object.freeze(result.data) };
}

/**
 * The server's rate limits from `serve`'s flags: a limit not given is the
 * default; 0 (or `off`) is none; a rate given without a burst gets as many
 * seconds' worth as the default's burst holds.
 */
export function rateLimitsOf(command: ServeCommand): Required<RateLimits> {
  const limit = (name: LimitName, perSecond: number | undefined, burst: number | undefined): RateLimitSetting => {
    if (perSecond === 0) return false;
    const fallback = DEFAULT_RATE_LIMITS[name];
    if (perSecond === undefined) return { perSecond: fallback.perSecond, burst: burst ?? fallback.burst };
    return { perSecond, burst: burst ?? Math.max(1, Math.ceil(perSecond * burstSeconds(name))) };
  };
  return {
    requests: limit('requests', command.rateLimit, command.rateLimitBurst),
    frames: limit('frames', command.frameRateLimit, command.frameRateLimitBurst),
    failedAuth: limit('failedAuth', command.failedAuthLimit, command.failedAuthLimitBurst),
  };
}
