import { isAbsolute } from 'node:path';
import { EngineError } from './engine-error.js';

/** The one credential a bot's CLI child runs with. */
export type EngineCredential = { kind: 'oauth'; token: string } | { kind: 'api_key'; key: string };

export interface ChildEnvOptions {
  /** PATH for the child; the caller reads it from its own config (nothing here reads process.env). */
  path: string;
  /** Private config home per bot (CLAUDE_CONFIG_DIR): transcripts, .claude.json, session state. Absolute. */
  configDir: string;
  /** Private HOME (the CLI also writes caches under $HOME). Defaults to configDir. Absolute. */
  home?: string;
  credential: EngineCredential;
  /** Passed through as ANTHROPIC_BASE_URL when set (e.g. the model double). */
  baseUrl?: string;
  /** CLAUDE_CODE_MAX_RETRIES. The CLI's own default (10) means ~3 minutes of retries before any result. */
  maxRetries?: number;
  /** CLAUDE_CODE_TMPDIR and TMPDIR: sub-agent outputs, sockets. Absolute. */
  tmpDir?: string;
  /** Further variables; they cannot override the ones set here, and credential variables in it are dropped. */
  extra?: Record<string, string>;
}

export const DEFAULT_MAX_RETRIES = 2;

/** Every variable the CLI would take as a credential; only the chosen one survives. */
export const CREDENTIAL_ENV_VARS = ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN'] as const;

/**
 * Builds the CLI child's whole environment. The SDK's `env` option REPLACES the
 * child environment (engine-notes §1), so every variable here is chosen on
 * purpose: nothing is copied from the parent process.
 */
export function buildChildEnv(options: ChildEnvOptions): Record<string, string> {
  const problems: string[] = [];
  if (!options.path) problems.push('path is empty (the CLI needs PATH to run Bash)');
  for (const [name, dir] of [
    ['configDir', options.configDir],
    ['home', options.home],
    ['tmpDir', options.tmpDir],
  ] as const) {
    if (dir !== undefined && !isAbsolute(dir)) problems.push(`${name} must be an absolute path, got "${dir}"`);
  }
  const secret = options.credential.kind === 'oauth' ? options.credential.token : options.credential.key;
  if (typeof secret !== 'string' || secret.trim() === '') {
    problems.push(`the ${options.credential.kind === 'oauth' ? 'OAuth token' : 'API key'} is empty`);
  }
  if (options.baseUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(options.baseUrl)) {
    problems.push(`baseUrl must be an http(s) URL, got "${options.baseUrl}"`);
  }
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    problems.push(`maxRetries must be a non-negative integer, got ${String(maxRetries)}`);
  }
  if (problems.length > 0) {
    throw new EngineError('invalid_child_env', `cannot build the Claude CLI environment: ${problems.join('; ')}`);
  }

  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.extra ?? {})) {
    if ((CREDENTIAL_ENV_VARS as readonly string[]).includes(key)) continue;
    env[key] = value;
  }
  env.PATH = options.path;
  env.HOME = options.home ?? options.configDir;
  env.CLAUDE_CONFIG_DIR = options.configDir;
  env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = '1';
  env.CLAUDE_CODE_MAX_RETRIES = String(maxRetries);
  if (options.baseUrl !== undefined) env.ANTHROPIC_BASE_URL = options.baseUrl;
  else delete env.ANTHROPIC_BASE_URL;
  if (options.tmpDir !== undefined) {
    env.CLAUDE_CODE_TMPDIR = options.tmpDir;
    env.TMPDIR = options.tmpDir;
  }
  if (options.credential.kind === 'oauth') env.CLAUDE_CODE_OAUTH_TOKEN = options.credential.token;
  else env.ANTHROPIC_API_KEY = options.credential.key;
  return env;
}

/**
 * Picks the credential from an environment the caller passes in (main.ts hands
 * over process.env; nothing here reads it): the OAuth token from `claude
 * setup-token` wins over an API key. Undefined means no credential: the bot
 * runs on the model double and says so.
 */
export function credentialFromEnv(env: Readonly<Record<string, string | undefined>>): EngineCredential | undefined {
  const token = env.CLAUDE_CODE_OAUTH_TOKEN?.trim();
  if (token) return { kind: 'oauth', token };
  const key = env.ANTHROPIC_API_KEY?.trim();
  if (key) return { kind: 'api_key', key };
  return undefined;
}
