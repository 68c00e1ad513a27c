import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/resolve-config.js';
import { buildQueryOptions } from './query-options.js';

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
      filesystem: { denyRead: ['/bot/claude', '/bot/scuba.json', '/bot/ws', '/home/bot'], allowRead: ['/bot/ws/th_1'] },
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
