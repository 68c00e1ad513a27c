import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { resolveConfig, type ResolveContext } from './resolve-config.js';

const files: Record<string, string> = {
  '/cfg/token.txt': 'bubble_agent_fromfile\n',
  '/cfg/empty.txt': '\n',
  '/abs/key.txt': 'sk-from-file',
};
const readFile = (path: string): string => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  return text;
};
const ctx = (env: Record<string, string> = {}, extra: Partial<ResolveContext> = {}): ResolveContext => ({
  env: { BOT_TOKEN: 'bubble_agent_secretvalue', ANTHROPIC_API_KEY: 'sk-env', ...env },
  baseDir: '/cfg',
  readFile,
  ...extra,
});
const bubble = { url: 'http://127.0.0.1:7777', principalId: 'bot-research', token: { env: 'BOT_TOKEN' } };

describe('resolveConfig: good configs', () => {
  it('fills every default when only bubble is given', () => {
    const result = resolveConfig({ bubble }, ctx());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(JSON.parse(JSON.stringify(result.config))).toEqual({
      bubble: { url: 'http://127.0.0.1:7777', principalId: 'bot-research', token: '[secret]' },
      claude: {
        workspaceRoot: '/cfg/.scuba/workspaces',
        configDir: '/cfg/.scuba/claude',
        systemPrompt: {},
        permissionMode: 'default',
        maxTurns: 40,
        maxRetries: 2,
        sandbox: true,
        privatePaths: [],
        readPaths: [],
        credential: { kind: 'api_key', key: '[secret]' },
      },
      approvals: { approvers: 'bot_owners', timeoutSeconds: 600 },
      turns: { steer: true, respondTo: 'all', maxBotOnlyTurns: 3, staleRunSeconds: 300 },
      backlog: { onFirstJoin: 'since_joined', onResume: 'catch_up', maxReplay: 50 },
      limits: {
        maxActiveQueries: 8,
        spareEngines: 1,
        idleQueryTimeoutSeconds: 900,
        idleStateSeconds: 60,
        restartBackoffMaxSeconds: 60,
      },
      store: { path: '/cfg/.scuba/state.db' },
      logger: { level: 'info', pretty: false },
    });
    expect(result.config.bubble.token.reveal()).toBe('bubble_agent_secretvalue');
    expect(result.config.bubble.token.source).toBe('env:BOT_TOKEN');
    expect(result.warnings).toEqual([]);
  });

  it('takes the issue example as written', () => {
    const example = {
      bubble,
      claude: {
        model: 'claude-sonnet-4-5',
        workspaceRoot: './.scuba/workspaces',
        systemPrompt: { append: 'Be brief.' },
        tools: ['Read', 'Bash'],
        permissionMode: 'default',
        maxTurns: 40,
      },
      approvals: { approvers: 'owners', timeoutSeconds: 600 },
      turns: { steer: true, respondTo: 'all', maxBotOnlyTurns: 3, staleRunSeconds: 300 },
      backlog: { onFirstJoin: 'since_joined', onResume: 'catch_up', maxReplay: 50 },
      limits: { maxActiveQueries: 8, idleQueryTimeoutSeconds: 900, restartBackoffMaxSeconds: 60 },
      store: { path: './.scuba/state.db' },
      logger: { level: 'info', pretty: false },
    };
    const result = resolveConfig(example, ctx());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.claude.model).toBe('claude-sonnet-4-5');
    expect(result.config.claude.tools).toEqual(['Read', 'Bash']);
    expect(result.config.claude.systemPrompt).toEqual({ append: 'Be brief.' });
    // "owners" once meant the thread's owners too: it is read as the bot's own owners now, and the boot log says so.
    expect(result.config.approvals.approvers).toBe('bot_owners');
    expect(result.warnings).toEqual([
      'approvals.approvers "owners" is read as "bot_owners" (the bot\'s own owners on the thread); write "thread_owners" to let the thread\'s owners approve',
    ]);
  });

  it.each(['bot_owners', 'thread_owners', 'participants'])('takes approvers %j as written', (approvers) => {
    const result = resolveConfig({ bubble, approvals: { approvers } }, ctx());
    expect(result.ok && result.config.approvals.approvers).toBe(approvers);
  });

  it('takes claude.sandbox false as the explicit opt-out, and refuses a non-boolean', () => {
    const off = resolveConfig({ bubble, claude: { sandbox: false } }, ctx());
    expect(off.ok && off.config.claude.sandbox).toBe(false);
    expect(resolveConfig({ bubble, claude: { sandbox: 'no' } }, ctx())).toEqual({
      ok: false,
      problems: ['claude.sandbox must be true or false (got "no")'],
    });
  });

  it.each([
    ['a token file relative to the config', { file: 'token.txt' }, 'bubble_agent_fromfile', 'file:/cfg/token.txt'],
    ['an inline token', 'bubble_agent_inline', 'bubble_agent_inline', 'inline'],
    ['an env token', { env: 'BOT_TOKEN' }, 'bubble_agent_secretvalue', 'env:BOT_TOKEN'],
  ])('resolves %s', (_name, token, value, source) => {
    const result = resolveConfig({ bubble: { ...bubble, token } }, ctx());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.bubble.token.reveal()).toBe(value);
    expect(result.config.bubble.token.source).toBe(source);
  });

  it.each([
    ['OAuth token from the env wins over an API key', { CLAUDE_CODE_OAUTH_TOKEN: 'oat' }, {}, 'oauth', 'oat'],
    ['API key from the env', {}, {}, 'api_key', 'sk-env'],
    [
      'claude.apiKey from a file overrides the env',
      { CLAUDE_CODE_OAUTH_TOKEN: 'oat' },
      { apiKey: { file: '/abs/key.txt' } },
      'api_key',
      'sk-from-file',
    ],
    ['claude.oauthToken from another env var', {}, { oauthToken: { env: 'MY_OAT' } }, 'oauth', 'oat-2'],
  ])('credential: %s', (_name, env, claude, kind, value) => {
    const result = resolveConfig({ bubble, claude }, ctx({ ...env, MY_OAT: 'oat-2' }));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const credential = result.config.claude.credential;
    expect(credential.kind).toBe(kind);
    expect(credential.kind === 'oauth' ? credential.token.reveal() : credential.key.reveal()).toBe(value);
  });

  it('takes the base URL from the config, else ANTHROPIC_BASE_URL', () => {
    const fromEnv = resolveConfig({ bubble }, ctx({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787' }));
    const fromConfig = resolveConfig(
      { bubble, claude: { baseUrl: 'http://10.0.0.1:1' } },
      ctx({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787' }),
    );
    expect(fromEnv.ok && fromEnv.config.claude.baseUrl).toBe('http://127.0.0.1:8787');
    expect(fromConfig.ok && fromConfig.config.claude.baseUrl).toBe('http://10.0.0.1:1');
  });

  it('accepts a list of approvers, absolute paths and an in-memory store', () => {
    const result = resolveConfig(
      {
        bubble,
        approvals: { approvers: ['alice', 'bob'] },
        claude: { workspaceRoot: '/srv/ws' },
        store: { path: ':memory:' },
      },
      ctx(),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.approvals.approvers).toEqual(['alice', 'bob']);
    expect(result.config.claude.workspaceRoot).toBe('/srv/ws');
    expect(result.config.store.path).toBe(':memory:');
  });

  it('strips a trailing slash from the Bubble URL', () => {
    const result = resolveConfig({ bubble: { ...bubble, url: 'http://127.0.0.1:7777/' } }, ctx());
    expect(result.ok && result.config.bubble.url).toBe('http://127.0.0.1:7777');
  });

  it('is deeply frozen', () => {
    const result = resolveConfig({ bubble, claude: { tools: ['Read'] } }, ctx());
    if (!result.ok) throw new Error('expected ok');
    expect(Object.isFrozen(result.config)).toBe(true);
    expect(Object.isFrozen(result.config.claude)).toBe(true);
    expect(Object.isFrozen(result.config.claude.tools)).toBe(true);
    expect(() => {
      (result.config.limits as { maxActiveQueries: number }).maxActiveQueries = 99;
    }).toThrow(TypeError);
  });

  it('warns about unknown keys, with a suggestion, without failing', () => {
    const result = resolveConfig({ bubble, claude: { tolls: [] }, extra: 1 }, ctx());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.warnings).toEqual([
      'claude.tolls is not a known setting (ignored); did you mean claude.tools?',
      'extra is not a known setting (ignored)',
    ]);
  });
});

describe('resolveConfig: mistakes, each listed in plain words', () => {
  it.each<[string, unknown, Record<string, string>, string[]]>([
    ['not an object', [], {}, ['the config must be a JSON object (got an empty list)']],
    ['no bubble section', {}, {}, ['bubble is missing']],
    ['bubble is a string', { bubble: 'x' }, {}, ['bubble must be an object with url, principalId and token (got "x")']],
    [
      'missing url and token',
      { bubble: { principalId: 'bot-research' } },
      {},
      ['bubble.url is missing', 'bubble.token is missing'],
    ],
    [
      'a non-http url',
      { bubble: { ...bubble, url: 'ftp://x' } },
      {},
      ['bubble.url must be an http(s) URL such as "http://127.0.0.1:7777" (got "ftp://x")'],
    ],
    [
      'a bad principal id',
      { bubble: { ...bubble, principalId: 'Bot!' } },
      {},
      [
        'bubble.principalId must be a principal id: 2 to 64 characters of lowercase letters, digits, ".", "_" or "-", starting with a letter or digit (got "Bot!")',
      ],
    ],
    [
      'a token with both env and file',
      { bubble: { ...bubble, token: { env: 'A', file: 'b' } } },
      {},
      ['bubble.token must be {"env": "NAME"} or {"file": "path"} (or the secret itself as a non-empty string)'],
    ],
    [
      'a token env var that is not set',
      { bubble: { ...bubble, token: { env: 'NOPE' } } },
      {},
      ['bubble.token: the environment variable NOPE is not set'],
    ],
    [
      'a token env var that is empty',
      { bubble: { ...bubble, token: { env: 'EMPTY' } } },
      { EMPTY: ' ' },
      ['bubble.token: the environment variable EMPTY is empty'],
    ],
    [
      'a token file that does not exist',
      { bubble: { ...bubble, token: { file: 'missing.txt' } } },
      {},
      ['bubble.token: the file /cfg/missing.txt does not exist'],
    ],
    [
      'a token file that is empty',
      { bubble: { ...bubble, token: { file: 'empty.txt' } } },
      {},
      ['bubble.token: the file /cfg/empty.txt is empty'],
    ],
    [
      'a wrong permission mode',
      { bubble, claude: { permissionMode: 'yolo' } },
      {},
      [
        'claude.permissionMode must be one of "default", "acceptEdits", "plan", "dontAsk", "bypassPermissions" (got "yolo")',
      ],
    ],
    [
      'a fractional maxTurns',
      { bubble, claude: { maxTurns: 2.5 } },
      {},
      ['claude.maxTurns must be a whole number (got 2.5)'],
    ],
    [
      'maxTurns as a string',
      { bubble, claude: { maxTurns: '40' } },
      {},
      ['claude.maxTurns must be a number (model round-trips per turn) (got "40")'],
    ],
    [
      'tools not a list',
      { bubble, claude: { tools: 'Read' } },
      {},
      ['claude.tools must be a list of tool names (got "Read")'],
    ],
    [
      'an empty approver list',
      { bubble, approvals: { approvers: [] } },
      {},
      ['approvals.approvers must name at least one principal (got an empty list)'],
    ],
    [
      'a wrong approver keyword',
      { bubble, approvals: { approvers: 'everyone' } },
      {},
      [
        'approvals.approvers must be "bot_owners", "thread_owners", "participants" or a list of principal ids (got "everyone")',
      ],
    ],
    [
      'a zero timeout',
      { bubble, approvals: { timeoutSeconds: 0 } },
      {},
      ['approvals.timeoutSeconds must be at least 1 (got 0)'],
    ],
    ['steer as a string', { bubble, turns: { steer: 'yes' } }, {}, ['turns.steer must be true or false (got "yes")']],
    [
      'a wrong respondTo',
      { bubble, turns: { respondTo: 'everyone' } },
      {},
      ['turns.respondTo must be one of "all", "mentions", "humans" (got "everyone")'],
    ],
    [
      'a negative maxBotOnlyTurns',
      { bubble, turns: { maxBotOnlyTurns: -1 } },
      {},
      ['turns.maxBotOnlyTurns must be 0 or more (got -1)'],
    ],
    [
      'a wrong backlog policy',
      { bubble, backlog: { onResume: 'since_joined' } },
      {},
      ['backlog.onResume must be one of "catch_up", "skip_to_head" (got "since_joined")'],
    ],
    [
      'zero maxActiveQueries',
      { bubble, limits: { maxActiveQueries: 0 } },
      {},
      ['limits.maxActiveQueries must be at least 1 (got 0)'],
    ],
    ['an empty store path', { bubble, store: { path: '' } }, {}, ['store.path must not be empty (got "")']],
    [
      'a wrong log level',
      { bubble, logger: { level: 'loud' } },
      {},
      ['logger.level must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent" (got "loud")'],
    ],
    [
      'no Claude credential anywhere',
      { bubble },
      { ANTHROPIC_API_KEY: '' },
      [
        'no Claude credential: set CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY, or name one as claude.oauthToken or claude.apiKey',
      ],
    ],
    [
      'both credentials named',
      { bubble, claude: { apiKey: { env: 'A' }, oauthToken: { env: 'B' } } },
      { A: 'a', B: 'b' },
      ['claude.oauthToken and claude.apiKey are both set; name one credential'],
    ],
    [
      'a bad ANTHROPIC_BASE_URL',
      { bubble },
      { ANTHROPIC_BASE_URL: 'localhost:8787' },
      ['the environment variable ANTHROPIC_BASE_URL must be an http(s) URL (got "localhost:8787")'],
    ],
  ])('%s', (_name, input, env, problems) => {
    expect(resolveConfig(input, ctx(env))).toEqual({ ok: false, problems });
  });

  it('lists every problem at once, with unknown-key hints', () => {
    const result = resolveConfig(
      {
        bubble: { url: 'http://x', principalId: 'bot-r', tokn: { env: 'BOT_TOKEN' } },
        claude: { maxTurns: 0 },
        limits: { idleQueryTimeoutSeconds: 1.5 },
      },
      ctx(),
    );
    expect(result).toEqual({
      ok: false,
      problems: [
        'bubble.token is missing',
        'claude.maxTurns must be at least 1 (got 0)',
        'limits.idleQueryTimeoutSeconds must be a whole number (got 1.5)',
        'bubble.tokn is not a known setting (ignored); did you mean bubble.token?',
      ],
    });
  });

  it('refuses bypassPermissions as root without IS_SANDBOX, accepts it with', () => {
    const input = { bubble, claude: { permissionMode: 'bypassPermissions' } };
    expect(resolveConfig(input, ctx({}, { isRoot: true }))).toEqual({
      ok: false,
      problems: ['claude.permissionMode "bypassPermissions" does not work as root unless IS_SANDBOX=1 is set'],
    });
    expect(resolveConfig(input, ctx({ IS_SANDBOX: '1' }, { isRoot: true })).ok).toBe(true);
    expect(resolveConfig(input, ctx({}, { isRoot: false })).ok).toBe(true);
  });

  it('never puts a secret value in a problem, a warning or the printed config', () => {
    const secretValue = 'bubble_agent_TOPSECRET';
    const bad = resolveConfig(
      { bubble: { ...bubble, token: 12345, url: secretValue } },
      ctx({ BOT_TOKEN: secretValue }),
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problems.join('\n')).not.toContain('12345');
    const good = resolveConfig({ bubble: { ...bubble, token: secretValue } }, ctx());
    if (!good.ok) throw new Error('expected ok');
    const printed = [
      JSON.stringify(good.config),
      inspect(good.config, { depth: 10 }),
      String(good.config.bubble.token),
    ].join('\n');
    expect(printed).not.toContain('TOPSECRET');
    expect(printed).not.toContain('sk-env');
  });
});
