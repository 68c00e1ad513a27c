import { SYSTEM_READ_PATHS, SYSTEM_SECRET_PATHS } from '@bubble/engine';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/resolve-config.js';
import { buildClaimPlan, buildQueryOptions, buildSpareOptions } from './query-options.js';

const config = (claude: Record<string, unknown> = {}) => {
  const result = resolveConfig(
    { bubble: { url: 'http://127.0.0.1:1', principalId: 'bot-a', token: 't' }, claude },
    { env: { ANTHROPIC_API_KEY: 'k', IS_SANDBOX: '1' }, baseDir: '/cfg', readFile: () => '' },
  );
  if (!result.ok) throw new Error(result.problems.join('; '));
  return result.config;
};
const canUseTool = async () => ({ behavior: 'allow' as const });
const off = { kind: 'off' } as const;

describe('buildQueryOptions', () => {
  it('defaults: Claude Code prompt with the thread context, no disk settings, partial messages, sub-agent text, approvals on', () => {
    const options = buildQueryOptions({
      config: config(),
      threadId: 'th_1',
      cwd: '/ws/th_1',
      env: { PATH: '/bin' },
      canUseTool,
      isolation: off,
    });
    expect(options).toMatchObject({
      cwd: '/ws/th_1',
      env: { PATH: '/bin' },
      settingSources: [],
      includePartialMessages: true,
      forwardSubagentText: true,
      permissionMode: 'default',
      maxTurns: 40,
      canUseTool,
    });
    expect(options.systemPrompt).toEqual({
      type: 'preset',
      preset: 'claude_code',
      append: expect.stringContaining('You are bot-a, a participant in the Bubble thread th_1'),
    });
    // allowedTools would silently bypass canUseTool (engine-notes §1): never set.
    expect(options.allowedTools).toBeUndefined();
    expect(options.model).toBeUndefined();
    expect(options.tools).toBeUndefined();
    expect(options.resume).toBeUndefined();
  });

  it('carries the configured model, tools, prompt append, resume id and MCP servers', () => {
    const mcpServers = { bubble: { type: 'sdk' as const, name: 'bubble', instance: {} as never } };
    const options = buildQueryOptions({
      config: config({
        model: 'claude-sonnet-4-5',
        tools: ['Read'],
        systemPrompt: { append: 'Be brief.' },
        maxTurns: 5,
      }),
      threadId: 'th_1',
      cwd: '/ws',
      env: {},
      canUseTool,
      isolation: off,
      resume: 'sess-1',
      mcpServers,
    });
    expect(options).toMatchObject({
      model: 'claude-sonnet-4-5',
      tools: ['Read'],
      maxTurns: 5,
      resume: 'sess-1',
      mcpServers,
    });
    expect((options.systemPrompt as { append: string }).append).toMatch(/\n\nBe brief\.$/);
  });

  it('bypassPermissions also sets the flag the SDK requires', () => {
    const options = buildQueryOptions({
      config: config({ permissionMode: 'bypassPermissions' }),
      threadId: 't',
      cwd: '/ws',
      env: {},
      canUseTool,
      isolation: off,
    });
    expect([options.permissionMode, options.allowDangerouslySkipPermissions]).toEqual(['bypassPermissions', true]);
  });

  it("sandboxed: commands in bubblewrap, private paths denied to commands and file tools, credentials out of the commands' env", () => {
    const options = buildQueryOptions({
      config: config({ tools: ['Bash', 'Read'] }),
      threadId: 'th_1',
      cwd: '/bot/ws/th_1',
      env: {},
      canUseTool,
      isolation: { kind: 'sandbox', privatePaths: ['/bot/ws', '/bot/claude', '/bot/scuba.json', '/home/bot'] },
    });
    expect(options.tools).toEqual(['Bash', 'Read']);
    expect(options.sandbox).toEqual({
      enabled: true,
      failIfUnavailable: true,
      autoAllowBashIfSandboxed: false,
      allowUnsandboxedCommands: false,
      filesystem: {
        denyRead: ['/', ...SYSTEM_SECRET_PATHS, '/bot/claude', '/bot/scuba.json', '/bot/ws', '/home/bot'].sort(),
        allowRead: [...SYSTEM_READ_PATHS, '/bot/ws/th_1'].sort(),
      },
      credentials: {
        envVars: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN'].map((name) => ({
          name,
          mode: 'deny',
        })),
      },
    });
    // The workspace root holds the thread's own workspace, so it is no deny rule (the gate refuses other workspaces).
    const deny = (options.settings as { permissions: { deny: string[] } }).permissions.deny;
    expect(deny).toContain('Read(//bot/claude/**)');
    expect(deny).toContain('Edit(//bot/scuba.json)');
    expect(deny).toContain('Read(//home/bot/**)');
    expect(deny).toContain('Read(//proc/**)');
    expect(deny.some((rule) => rule.includes('/bot/ws'))).toBe(false);
    expect(
      (options.settings as { permissions: Record<string, unknown> }).permissions.blockWritesOutsideWorkingDirectories,
    ).toBe(true);
    expect(options.systemPrompt).toMatchObject({
      append: expect.stringContaining('may write only inside your workspace /bot/ws/th_1'),
    });
  });

  it('sandbox unavailable: no built-in tools at all, whatever the config names', () => {
    const options = buildQueryOptions({
      config: config({ tools: ['Bash'] }),
      threadId: 't',
      cwd: '/ws',
      env: {},
      canUseTool,
      isolation: { kind: 'unavailable', reason: 'bwrap is not on PATH' },
    });
    expect(options.tools).toEqual([]);
    expect(options.sandbox).toBeUndefined();
  });
});

describe('the spare split: host options at start-up, the thread in the claim', () => {
  const sandbox = { kind: 'sandbox', privatePaths: ['/bot/ws', '/bot/claude', '/bot/tmp', '/home/bot'] } as const;
  const scuba = () => config({ tools: ['Bash', 'Read'], workspaceRoot: '/bot/ws', configDir: '/bot/claude' });
  const spareTmp = '/bot/tmp/.spare-spare-1-abcd';
  const spare = () =>
    buildSpareOptions({
      config: scuba(),
      env: { PATH: '/bin', TMPDIR: spareTmp },
      canUseTool,
      isolation: sandbox,
      tmpDir: spareTmp,
    });

  it('a spare starts with nothing of any thread: no cwd, no resume, no context line, no workspace opened', () => {
    const options = spare();
    expect(options.cwd).toBeUndefined();
    expect(options.resume).toBeUndefined();
    expect(options.systemPrompt).toEqual({ type: 'preset', preset: 'claude_code' });
    expect(options).toMatchObject({ settingSources: [], includePartialMessages: true, tools: ['Bash', 'Read'] });
    expect(options.sandbox?.filesystem).toEqual({
      denyRead: ['/', ...SYSTEM_SECRET_PATHS, '/bot/claude', '/bot/tmp', '/bot/ws', '/home/bot'].sort(),
      // The system folders every thread may read; no workspace.
      allowRead: [...SYSTEM_READ_PATHS].sort(),
    });
    // The rules every thread under the workspace root has, and only those (a claim cannot take one away).
    const deny = (options.settings as { permissions: { deny: string[] } }).permissions.deny;
    expect(deny).toContain('Read(//bot/claude/**)');
    expect(deny).toContain('Read(//home/bot/**)');
    expect(deny.some((rule) => rule.includes('/bot/ws') || rule.includes('/bot/tmp'))).toBe(false);
  });

  it("a spare plus its claim is the thread's cold query: the same prompt, folder and isolation", () => {
    const cold = buildQueryOptions({
      config: scuba(),
      threadId: 'th_1',
      cwd: '/bot/ws/th_1',
      env: { PATH: '/bin', TMPDIR: spareTmp },
      canUseTool,
      isolation: sandbox,
    });
    const plan = buildClaimPlan({
      config: scuba(),
      threadId: 'th_1',
      cwd: '/bot/ws/th_1',
      isolation: sandbox,
      spare: spare(),
    });
    if ('refuse' in plan) throw new Error(plan.refuse);
    expect(plan.claim).toEqual({
      cwd: '/bot/ws/th_1',
      appendSystemPrompt: (cold.systemPrompt as { append: string }).append,
    });
    expect(plan.settings).toEqual({
      sandbox: cold.sandbox,
      permissions: (cold.settings as { permissions: unknown }).permissions,
    });
    expect(JSON.stringify(spare())).not.toContain('th_1');
  });

  it('a thread whose workspace lies where the spare denies cannot take it (nothing a spare holds can be lifted)', () => {
    const plan = buildClaimPlan({
      config: scuba(),
      threadId: 'th_old',
      cwd: '/home/bot/old-workspaces/th_old',
      isolation: sandbox,
      spare: spare(),
    });
    expect(plan).toEqual({ refuse: expect.stringContaining('it holds the rule Read(//home/bot/**)') });
  });

  it('without a sandbox the claim carries no rules', () => {
    const options = buildSpareOptions({ config: scuba(), env: {}, canUseTool, isolation: off, tmpDir: spareTmp });
    expect(options.sandbox).toBeUndefined();
    const plan = buildClaimPlan({ config: scuba(), threadId: 't', cwd: '/bot/ws/t', isolation: off, spare: options });
    expect(plan).toMatchObject({ claim: { cwd: '/bot/ws/t' }, settings: {} });
  });
});
