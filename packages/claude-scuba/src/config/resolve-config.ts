import { ScubaConfigFileSchema, type ApproverPolicy, type ScubaConfigFile } from './config-schema.js';
import { configResolver, describeIssues, unknownKeys, type Secret, type SecretRef } from '@bubble/engine';

/** The engine credential the CLI child runs with. */
export type ClaudeCredential = { kind: 'oauth'; token: Secret } | { kind: 'api_key'; key: Secret };

type Sections = Omit<ScubaConfigFile, 'bubble' | 'claude' | 'approvals'>;

/**
 * The config the bot runs with: defaults filled in, paths absolute, secrets
 * resolved (as `Secret`s, which never print their value), deeply frozen.
 */
export interface ScubaConfig extends Readonly<Sections> {
  readonly approvals: Readonly<Omit<ScubaConfigFile['approvals'], 'approvers'> & { approvers: ApproverPolicy }>;
  readonly bubble: { readonly url: string; readonly principalId: string; readonly token: Secret };
  readonly claude: Readonly<
    Omit<ScubaConfigFile['claude'], 'oauthToken' | 'apiKey' | 'baseUrl' | 'tools'> & {
      tools: readonly string[] | undefined;
      credential: ClaudeCredential;
      baseUrl: string | undefined;
    }
  >;
}

export interface ResolveContext {
  /** The process environment, passed in by main.ts. */
  env: Readonly<Record<string, string | undefined>>;
  /** Relative paths in the config are relative to this directory (the config file's). */
  baseDir: string;
  readFile: (path: string) => string;
  /** Whether the bot runs as root (bypassPermissions then needs IS_SANDBOX=1). Default false. */
  isRoot?: boolean;
}

export type ResolveResult = { ok: true; config: ScubaConfig; warnings: string[] } | { ok: false; problems: string[] };

/**
 * Validates a parsed JSON value as a config, resolving secrets and paths in
 * this one place. Returns every problem at once, in plain words.
 */
export function resolveConfig(input: unknown, context: ResolveContext): ResolveResult {
  const warnings = unknownKeys(ScubaConfigFileSchema, input);
  const parsed = ScubaConfigFileSchema.safeParse(input);
  if (!parsed.success) return { ok: false, problems: [...describeIssues(parsed.error.issues, input), ...warnings] };
  const file = parsed.data;

  const { problems, abs, secret } = configResolver(context);

  const token = secret(file.bubble.token, 'bubble.token');
  const credential = resolveCredential(file.claude, context.env, secret, problems);
  const baseUrl = file.claude.baseUrl ?? nonEmpty(context.env.ANTHROPIC_BASE_URL);
  if (file.claude.baseUrl === undefined && baseUrl !== undefined && !/^https?:\/\/\S+$/.test(baseUrl)) {
    problems.push(
      `the environment variable ANTHROPIC_BASE_URL must be an http(s) URL (got ${JSON.stringify(baseUrl)})`,
    );
  }
  if (file.claude.permissionMode === 'bypassPermissions' && context.env.IS_SANDBOX !== '1' && context.isRoot === true) {
    problems.push('claude.permissionMode "bypassPermissions" does not work as root unless IS_SANDBOX=1 is set');
  }
  if (problems.length > 0 || token === undefined || credential === undefined)
    return { ok: false, problems: [...problems, ...warnings] };
  if (file.approvals.approvers === 'owners') {
    warnings.push(
      'approvals.approvers "owners" is read as "bot_owners" (the bot\'s own owners on the thread); write "thread_owners" to let the thread\'s owners approve',
    );
  }

  const { oauthToken: _o, apiKey: _a, baseUrl: _b, tools, ...claude } = file.claude;
  const config: ScubaConfig = {
    ...file,
    approvals: {
      ...file.approvals,
      approvers: file.approvals.approvers === 'owners' ? 'bot_owners' : file.approvals.approvers,
    },
    bubble: { url: file.bubble.url.replace(/\/+$/, ''), principalId: file.bubble.principalId, token },
    claude: {
      ...claude,
      tools,
      workspaceRoot: abs(claude.workspaceRoot),
      configDir: abs(claude.configDir),
      privatePaths: claude.privatePaths.map(abs),
      readPaths: claude.readPaths.map(abs),
      credential,
      baseUrl,
    },
    store: { path: file.store.path === ':memory:' ? ':memory:' : abs(file.store.path) },
  };
  return { ok: true, config: deepFreeze(config), warnings };
}

function resolveCredential(
  claude: ScubaConfigFile['claude'],
  env: ResolveContext['env'],
  secret: (ref: SecretRef, where: string) => Secret | undefined,
  problems: string[],
): ClaudeCredential | undefined {
  if (claude.oauthToken !== undefined && claude.apiKey !== undefined) {
    problems.push('claude.oauthToken and claude.apiKey are both set; name one credential');
    return undefined;
  }
  if (claude.oauthToken !== undefined) {
    const token = secret(claude.oauthToken, 'claude.oauthToken');
    return token && { kind: 'oauth', token };
  }
  if (claude.apiKey !== undefined) {
    const key = secret(claude.apiKey, 'claude.apiKey');
    return key && { kind: 'api_key', key };
  }
  // Seed 004: the OAuth token (a subscription) is the intended credential, so it wins over an API key.
  if (nonEmpty(env.CLAUDE_CODE_OAUTH_TOKEN) !== undefined)
    return { kind: 'oauth', token: secret({ env: 'CLAUDE_CODE_OAUTH_TOKEN' }, 'claude credential')! };
  if (nonEmpty(env.ANTHROPIC_API_KEY) !== undefined)
    return { kind: 'api_key', key: secret({ env: 'ANTHROPIC_API_KEY' }, 'claude credential')! };
  problems.push(
    'no Claude credential: set CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY, or name one as claude.oauthToken or claude.apiKey',
  );
  return undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
