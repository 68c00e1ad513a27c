import { PRINCIPAL_ID_PATTERN } from '@bubble/protocol';
import { z } from 'zod';
import { SecretRefSchema } from '@bubble/engine';

/**
 * The claude-scuba config file, as written (issue 5, "Config"). Everything but
 * `bubble` has a default. Relative paths are relative to the config file.
 * Unknown keys are not fatal (a newer file may carry settings an older bot
 * does not know); they come back as warnings, see `unknownKeys`.
 */

const principalId = z
  .string({ error: 'must be a principal id (a string)' })
  .regex(
    PRINCIPAL_ID_PATTERN,
    'must be a principal id: 2 to 64 characters of lowercase letters, digits, ".", "_" or "-", starting with a letter or digit',
  );

const httpUrl = z.string({ error: 'must be an http(s) URL (a string)' }).refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an http(s) URL such as "http://127.0.0.1:7777"');

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

export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;
export const RESPOND_TO = ['all', 'mentions', 'humans'] as const;
export const ON_FIRST_JOIN = ['since_joined', 'skip_to_head'] as const;
export const ON_RESUME = ['catch_up', 'skip_to_head'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}` });

export const BubbleSectionSchema = z.object(
  {
    url: httpUrl.describe('The Bubble server, e.g. "http://127.0.0.1:7777".'),
    principalId: principalId.describe("The bot's principal id on that server."),
    token: SecretRefSchema.describe("The bot principal's bearer token (`bubble_agent_…`)."),
  },
  { error: 'must be an object with url, principalId and token' },
);

export const ClaudeSectionSchema = z.object(
  {
    model: z
      .string({ error: 'must be a model name (a string)' })
      .min(1, 'must not be empty')
      .optional()
      .describe("Omitted: the engine's own default model."),
    workspaceRoot: path
      .default('./.scuba/workspaces')
      .describe('Each thread works in `<workspaceRoot>/<threadId>`, fixed once per thread.'),
    configDir: path
      .default('./.scuba/claude')
      .describe("The CLI's private config home (CLAUDE_CONFIG_DIR): transcripts live here, so persist it."),
    systemPrompt: z
      .object(
        { append: z.string({ error: 'must be a string' }).optional().describe('Text appended to it.') },
        { error: 'must be an object like {"append": "…"}' },
      )
      .default({})
      .describe("Claude Code's own system prompt, with `append` added at its end."),
    tools: z
      .array(z.string({ error: 'must be a tool name (a string)' }).min(1, 'must not be empty'), {
        error: 'must be a list of tool names',
      })
      .optional()
      .describe("The base tool set. Omitted: the CLI's default set. `[]`: no built-in tools."),
    permissionMode: oneOf(PERMISSION_MODES)
      .default('default')
      .describe("Claude Code's permission mode. Tool calls it would ask about are put to the people on the thread."),
    maxTurns: positiveInt('model round-trips per turn').default(40).describe('Model round-trips per turn.'),
    maxRetries: nonNegativeInt('API retries')
      .default(2)
      .describe('CLAUDE_CODE_MAX_RETRIES for the CLI (its own default of 10 means minutes of silent retries).'),
    oauthToken: SecretRefSchema.optional().describe(
      "The engine's credential; omitted: CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY from the environment.",
    ),
    apiKey: SecretRefSchema.optional().describe('An Anthropic API key, instead of `oauthToken`.'),
    baseUrl: httpUrl
      .optional()
      .describe("The Messages API endpoint; omitted: ANTHROPIC_BASE_URL from the environment, else Anthropic's."),
    sandbox: z
      .boolean({ error: 'must be true or false' })
      .default(true)
      .describe(
        "Claude Code's own sandbox (bubblewrap on Linux) around every command its tools run. " +
          'Where it cannot start, the bot runs no tools at all. `false` is an explicit opt-out: ' +
          "commands then run as the bot's own user, with its files in reach.",
      ),
    privatePaths: z
      .array(path, { error: 'must be a list of paths' })
      .default([])
      .describe(
        "More paths no tool may read or change, beside the bot's own files (the config's folder, " +
          "the state database, the CLI's home, every workspace but the thread's, the user's home): " +
          "a server's data folder on the same machine, say.",
      ),
    readPaths: z
      .array(path, { error: 'must be a list of paths' })
      .default([])
      .describe(
        "More folders (or files) that commands may read, beside the thread's workspace, the system's " +
          'folders (/usr, /bin, /sbin, /lib*, /etc but its secrets) and the toolchains on PATH; every other ' +
          "path reads as missing. A path inside one of the bot's private paths stays denied.",
      ),
  },
  { error: 'must be an object' },
);

/**
 * Who may answer the bot's parked tool calls, among the people on the thread:
 * `bot_owners` (the default) the owners of the bot principal, `thread_owners` the
 * thread's owners, `participants` anyone on it, or a list of principal ids.
 * `owners` is read as `bot_owners` (it meant thread owners and the bot's owners
 * before; a config that wants thread owners must now say so).
 */
export const APPROVER_POLICIES = ['bot_owners', 'thread_owners', 'participants'] as const;

export const ApprovalsSectionSchema = z.object(
  {
    approvers: z
      .union(
        [z.enum([...APPROVER_POLICIES, 'owners']), z.array(principalId).min(1, 'must name at least one principal')],
        {
          error: 'must be "bot_owners", "thread_owners", "participants" or a list of principal ids',
        },
      )
      .default('bot_owners')
      .describe(
        'Whose answer to a parked tool call counts, among the people on the thread: ' +
          '`"bot_owners"` the owners of the bot principal, `"thread_owners"` the thread\'s owners, ' +
          '`"participants"` anyone on it, or a list of principal ids. `"owners"` is read as ' +
          '`"bot_owners"`, with a warning. The bot never approves its own calls.',
      ),
    timeoutSeconds: positiveInt('seconds')
      .default(600)
      .describe('A parked call nobody answers in this many seconds is denied.'),
  },
  { error: 'must be an object' },
);

/** An approver policy as the bot runs it (`owners` already read as `bot_owners`). */
export type ApproverPolicy = (typeof APPROVER_POLICIES)[number] | readonly string[];

export const TurnsSectionSchema = z.object(
  {
    steer: z
      .boolean({ error: 'must be true or false' })
      .default(true)
      .describe(
        'A message that arrives during a turn is pushed into it (steering) instead of waiting for the next turn.',
      ),
    respondTo: oneOf(RESPOND_TO)
      .default('all')
      .describe(
        'Which turns the bot answers: every one, only turns that name it (`@id` or `@display name`), or only turns with a human author.',
      ),
    maxBotOnlyTurns: nonNegativeInt('turns')
      .default(3)
      .describe('Bot turns in a row that answer only bots, counted on the thread whichever bots take them.'),
    staleRunSeconds: positiveInt('seconds')
      .default(300)
      .describe(
        "A foreign run (someone's message) with no event for this long is taken as it stands, as " +
          'if finished: a browser closed mid-message must not keep the bot from answering.',
      ),
  },
  { error: 'must be an object' },
);

export const BacklogSectionSchema = z.object(
  {
    onFirstJoin: oneOf(ON_FIRST_JOIN)
      .default('since_joined')
      .describe(
        "Where a thread with no local settlement checkpoint starts reading: since the bot's grant " +
          '(at most the newest `maxReplay` events, never splitting a run), or at the head, ' +
          'discarding history.',
      ),
    onResume: oneOf(ON_RESUME)
      .default('catch_up')
      .describe(
        'Where a thread with a local settlement checkpoint starts reading after a restart: right ' +
          'after the checkpoint (at most the newest `maxReplay` events), or at the head.',
      ),
    maxReplay: nonNegativeInt('events')
      .default(50)
      .describe('The newest raw events read back when joining or resuming, widened backward so no run is split.'),
  },
  { error: 'must be an object' },
);

export const LimitsSectionSchema = z.object(
  {
    maxActiveQueries: positiveInt('CLI processes')
      .default(8)
      .describe('Claude Code processes running at once; threads beyond it wait their turn.'),
    spareEngines: nonNegativeInt('spare CLI processes')
      .default(1)
      .describe(
        'Claude Code processes kept started before a thread needs one, so the first turn of a thread skips ' +
          "the CLI's start-up. Each counts against maxActiveQueries (about 165 MB while it waits) and starts " +
          'only while a slot is free; a thread that finds every slot taken closes one. A turn that resumes an ' +
          'earlier session cannot use one. 0 turns them off.',
      ),
    idleQueryTimeoutSeconds: positiveInt('seconds')
      .default(900)
      .describe("A thread's Claude process idle this long is closed; the next message resumes its session."),
    idleStateSeconds: positiveInt('seconds')
      .default(60)
      .describe(
        'A thread with nothing under way this long (no Claude process, nothing buffered, no approval waiting) ' +
          'drops what the bot holds of it in memory; its next event reads it back from the thread.',
      ),
    restartBackoffMaxSeconds: positiveInt('seconds')
      .default(60)
      .describe('After Claude fails to start or dies, the next start waits 1 s, then 2 s, 4 s, … up to this.'),
  },
  { error: 'must be an object' },
);

export const StoreSectionSchema = z.object(
  {
    path: path
      .default('./.scuba/state.db')
      .describe('A SQLite file, or ":memory:" (then a restart forgets every checkpoint).'),
  },
  { error: 'must be an object' },
);

export const LoggerSectionSchema = z.object(
  {
    level: oneOf(LOG_LEVELS).default('info').describe('The log level (pino).'),
    pretty: z
      .boolean({ error: 'must be true or false' })
      .default(false)
      .describe('Human-readable log lines instead of JSON.'),
  },
  { error: 'must be an object' },
);

export const ScubaConfigFileSchema = z.object(
  {
    bubble: BubbleSectionSchema,
    claude: ClaudeSectionSchema.default(() => ClaudeSectionSchema.parse({})),
    approvals: ApprovalsSectionSchema.default(() => ApprovalsSectionSchema.parse({})),
    turns: TurnsSectionSchema.default(() => TurnsSectionSchema.parse({})),
    backlog: BacklogSectionSchema.default(() => BacklogSectionSchema.parse({})),
    limits: LimitsSectionSchema.default(() => LimitsSectionSchema.parse({})),
    store: StoreSectionSchema.default(() => StoreSectionSchema.parse({})),
    logger: LoggerSectionSchema.default(() => LoggerSectionSchema.parse({})),
  },
  { error: 'must be a JSON object' },
);

/** The config file after parsing: defaults filled in, secrets and paths not yet resolved. */
export type ScubaConfigFile = z.infer<typeof ScubaConfigFileSchema>;
