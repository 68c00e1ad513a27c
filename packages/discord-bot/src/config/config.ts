import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  configResolver,
  describeConfigProblems,
  describeIssues,
  readConfigJson,
  SecretRefSchema,
  unknownKeys,
  type Secret,
} from '@bubble/engine';
import { z } from 'zod';
import { DiscordBotError } from '../errors.js';

/**
 * The bubble-discord config file (issue 14, "Config"). Everything but
 * `discord.token`, `discord.applicationId` and `secretsKey` has a default.
 * Relative paths are relative to the config file. Unknown keys are warnings.
 */

const snowflake = z
  .string({ error: 'must be a Discord id (a string of digits)' })
  .regex(/^\d{1,20}$/, 'must be a Discord id: digits only');
const httpUrl = z.string({ error: 'must be an http(s) URL (a string)' }).refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an http(s) URL such as "https://discord.com/api"');
const positiveInt = (what: string) =>
  z
    .number({ error: `must be a number (${what})` })
    .int('must be a whole number')
    .positive('must be at least 1');
const nonNegativeInt = (what: string) =>
  z
    .number({ error: `must be a number (${what})` })
    .int('must be a whole number')
    .nonnegative('must be 0 or more');
const path = z.string({ error: 'must be a path (a string)' }).min(1, 'must not be empty');
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}` });

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const APPROVAL_STYLES = ['none', 'buttons'] as const;
export const DEFAULT_DISCORD_API = 'https://discord.com/api';

export const ConfigFileSchema = z.object(
  {
    discord: z.object(
      {
        token: SecretRefSchema.describe("The Discord application's bot token."),
        applicationId: snowflake.describe("The application's id (its client id)."),
        apiUrl: httpUrl.default(DEFAULT_DISCORD_API).describe("Discord's REST API; only a test double changes it."),
        guildIds: z
          .array(snowflake, { error: 'must be a list of Discord ids' })
          .optional()
          .describe(
            'The only guilds the bot works in: messages and interactions from any other are ignored, and its slash ' +
              'commands are registered in these at boot (instantly visible). Omitted: every guild, commands globally.',
          ),
        leaveOtherGuilds: z
          .boolean({ error: 'must be true or false' })
          .default(false)
          .describe('With guildIds: leave every other guild, at start and whenever the bot is added to one.'),
        allowBots: z
          .boolean({ error: 'must be true or false' })
          .default(false)
          .describe("Answer other bots' messages too (never its own)."),
      },
      { error: 'must be an object with token and applicationId' },
    ),
    secretsKey: SecretRefSchema.describe(
      "The key that seals users' tokens at rest (AES-256-GCM): 32 bytes as hex or base64, or a passphrase.",
    ),
    previousSecretsKeys: z
      .array(SecretRefSchema, { error: 'must be a list of secrets' })
      .default([])
      .describe(
        'Keys that sealed tokens before secretsKey (a rotation): a token is opened with secretsKey, else with these ' +
          'in order, and at start every token sealed with one of them is sealed again with secretsKey.',
      ),
    claude: z
      .object(
        {
          model: z
            .string({ error: 'must be a model name (a string)' })
            .min(1, 'must not be empty')
            .optional()
            .describe("Omitted: the engine's default model. `/model` changes it per thread."),
          configDir: path
            .default('./.discord/claude')
            .describe("The CLI's config home: every thread's transcript lives here. Keep it on persistent storage."),
          workspaceRoot: path
            .default('./.discord/workspaces')
            .describe('Each thread works in `<workspaceRoot>/<threadId>`, fixed once.'),
          approvals: oneOf(APPROVAL_STYLES)
            .default('none')
            .describe('Agentic mode: "buttons" asks the turn\'s sender before Write, Edit or Bash runs.'),
          approvalTimeoutSeconds: positiveInt('seconds')
            .default(300)
            .describe(
              'No click within this many seconds denies the tool call, or (the list of files other people changed ' +
                'before an agentic turn) leaves the turn unrun.',
            ),
          agentic: z
            .boolean({ error: 'must be true or false' })
            .default(true)
            .describe(
              "Whether `/mode agentic` is offered. Agentic tools always run in Claude Code's sandbox " +
                '(bubblewrap): where it cannot start, or with this false, agentic mode is refused.',
            ),
          maxRetries: nonNegativeInt('API retries')
            .default(2)
            .describe('CLAUDE_CODE_MAX_RETRIES for the CLI (its own default of 10 means minutes of silent retries).'),
          baseUrl: httpUrl
            .optional()
            .describe("The Messages API endpoint; omitted: ANTHROPIC_BASE_URL from the environment, else Anthropic's."),
          chatPrompt: z
            .string({ error: 'must be a string' })
            .optional()
            .describe("Chat mode's system prompt (a custom prompt); omitted: the built-in one."),
          agenticAppend: z
            .string({ error: 'must be a string' })
            .optional()
            .describe("Appended to Claude Code's own prompt in agentic mode."),
        },
        { error: 'must be an object' },
      )
      .default({
        configDir: './.discord/claude',
        workspaceRoot: './.discord/workspaces',
        approvals: 'none',
        approvalTimeoutSeconds: 300,
        agentic: true,
        maxRetries: 2,
      }),
    limits: z
      .object(
        {
          maxConcurrentRuns: positiveInt('runs at once')
            .default(2)
            .describe('One CLI process per run (~140 MB each): the memory knob.'),
          maxImageBytes: positiveInt('bytes')
            .default(5 * 1024 * 1024)
            .describe('A larger attached image is left out of the prompt, with a note to Claude saying so.'),
          maxImages: nonNegativeInt('images per message')
            .default(4)
            .describe('Images of one message passed to Claude; the rest are left out, with a note saying so.'),
          maxRunSeconds: positiveInt('seconds')
            .default(900)
            .describe('A run still going after this long is stopped: it holds one of the few slots.'),
        },
        { error: 'must be an object' },
      )
      .default({ maxConcurrentRuns: 2, maxImageBytes: 5 * 1024 * 1024, maxImages: 4, maxRunSeconds: 900 }),
    dashboard: z
      .object(
        {
          host: z
            .string({ error: 'must be a host name or address' })
            .min(1, 'must not be empty')
            .default('127.0.0.1')
            .describe('Where the dashboard listens.'),
          port: z
            .number({ error: 'must be a port number' })
            .int('must be a whole number')
            .min(0, 'must be 0 to 65535')
            .max(65535, 'must be 0 to 65535')
            .default(7790)
            .describe('Its port (0: any free port).'),
          token: SecretRefSchema.describe("The operator's sign-in token for the dashboard."),
        },
        { error: 'must be an object with a token' },
      )
      .optional()
      .describe("The operator's web dashboard (runs, queue, linked users); omitted: no dashboard."),
    store: z
      .object(
        {
          path: path
            .default('./.discord/state.db')
            .describe("The SQLite file of thread sessions and users' sealed tokens."),
        },
        { error: 'must be an object' },
      )
      .default({ path: './.discord/state.db' }),
    logger: z
      .object(
        {
          level: oneOf(LOG_LEVELS).default('info').describe('The log level (pino).'),
          pretty: z
            .boolean({ error: 'must be true or false' })
            .default(false)
            .describe('Human-readable log lines instead of JSON.'),
        },
        { error: 'must be an object' },
      )
      .default({ level: 'info', pretty: false }),
  },
  { error: 'must be a JSON object' },
);
export type ConfigFile = z.infer<typeof ConfigFileSchema>;

/** The config the bot runs with: defaults in, paths absolute, secrets resolved as `Secret`s, frozen. */
export interface DiscordBotConfig {
  readonly discord: Readonly<
    Omit<ConfigFile['discord'], 'token' | 'guildIds'> & { token: Secret; guildIds: readonly string[] | undefined }
  >;
  readonly secretsKey: Secret;
  readonly previousSecretsKeys: readonly Secret[];
  readonly claude: Readonly<Omit<ConfigFile['claude'], 'baseUrl'> & { baseUrl: string | undefined }>;
  readonly limits: Readonly<ConfigFile['limits']>;
  readonly dashboard: Readonly<{ host: string; port: number; token: Secret }> | undefined;
  readonly store: Readonly<ConfigFile['store']>;
  readonly logger: Readonly<ConfigFile['logger']>;
}

export interface ResolveContext {
  env: Readonly<Record<string, string | undefined>>;
  baseDir: string;
  readFile: (path: string) => string;
}

export type ResolveResult =
  | { ok: true; config: DiscordBotConfig; warnings: string[] }
  | { ok: false; problems: string[] };

export function resolveConfig(input: unknown, context: ResolveContext): ResolveResult {
  const warnings = unknownKeys(ConfigFileSchema, input);
  const parsed = ConfigFileSchema.safeParse(input);
  if (!parsed.success) return { ok: false, problems: [...describeIssues(parsed.error.issues, input), ...warnings] };
  const file = parsed.data;
  const { problems, abs, secret } = configResolver(context);
  const token = secret(file.discord.token, 'discord.token');
  const secretsKey = secret(file.secretsKey, 'secretsKey');
  const previousSecretsKeys = file.previousSecretsKeys.map((ref, i) => secret(ref, `previousSecretsKeys[${i}]`));
  const dashboardToken = file.dashboard === undefined ? undefined : secret(file.dashboard.token, 'dashboard.token');
  const envBase = context.env.ANTHROPIC_BASE_URL?.trim() || undefined;
  if (file.claude.baseUrl === undefined && envBase !== undefined && !/^https?:\/\/\S+$/.test(envBase)) {
    problems.push(
      `the environment variable ANTHROPIC_BASE_URL must be an http(s) URL (got ${JSON.stringify(envBase)})`,
    );
  }
  if (file.discord.leaveOtherGuilds && file.discord.guildIds === undefined)
    problems.push('discord.leaveOtherGuilds needs discord.guildIds (the guilds to stay in)');
  if (
    problems.length > 0 ||
    token === undefined ||
    secretsKey === undefined ||
    previousSecretsKeys.some((key) => key === undefined)
  )
    return { ok: false, problems: [...problems, ...warnings] };
  const config: DiscordBotConfig = {
    discord: {
      ...file.discord,
      apiUrl: file.discord.apiUrl.replace(/\/+$/, ''),
      token,
      guildIds: file.discord.guildIds,
    },
    secretsKey,
    previousSecretsKeys: previousSecretsKeys.filter((key): key is Secret => key !== undefined),
    claude: {
      ...file.claude,
      configDir: abs(file.claude.configDir),
      workspaceRoot: abs(file.claude.workspaceRoot),
      baseUrl: file.claude.baseUrl ?? envBase,
    },
    limits: file.limits,
    dashboard:
      file.dashboard === undefined || dashboardToken === undefined
        ? undefined
        : { host: file.dashboard.host, port: file.dashboard.port, token: dashboardToken },
    store: { path: abs(file.store.path) },
    logger: file.logger,
  };
  return { ok: true, config: deepFreeze(config), warnings };
}

export interface LoadedConfig {
  config: DiscordBotConfig;
  warnings: string[];
  path: string;
}

/** Reads, validates and resolves a config file; throws `config_unreadable` or `config_invalid` with every problem. */
export function loadConfigFile(
  file: string,
  options: { env: Readonly<Record<string, string | undefined>>; readFile?: (path: string) => string },
): LoadedConfig {
  const readFile = options.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const read = readConfigJson(file, readFile);
  if (!read.ok)
    throw new DiscordBotError('config_unreadable', read.problem, { cause: read.cause, problems: [read.problem] });
  const { path, json } = read;
  const resolved = resolveConfig(json, { env: options.env, baseDir: dirname(path), readFile });
  if (!resolved.ok)
    throw new DiscordBotError('config_invalid', describeConfigProblems(path, resolved.problems), {
      problems: resolved.problems,
    });
  return { config: resolved.config, warnings: resolved.warnings, path };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
