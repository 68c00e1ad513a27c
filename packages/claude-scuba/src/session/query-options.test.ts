import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/resolve-config.js';
import { buildQueryOptions } from './query-options.js';

const config = (claude: Record<string, unknown> = {}) => {
  const result = resolveConfig({ bubble: { url: 'http://127.0.0.1:1', principalId: 'bot-a', token: 't' }, claude }, { env: { ANTHROPIC_API_KEY: 'k', IS_SANDBOX: '1' }, baseDir: '/cfg', readFile: () => '' });
  if (!result.ok) throw new Error(result.problems.join('; '));
  return result.config;
};
const canUseTool = async () => ({ behavior: 'allow' as const });

describe('buildQueryOptions', () => {
  it('defaults: Claude Code prompt with the thread context, no disk settings, partial messages, sub-agent text, approvals on', () => {
    const options = buildQueryOptions({ config: config(), threadId: 'th_1', cwd: '/ws/th_1', env: { PATH: '/bin' }, canUseTool });
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
    expect(options.systemPrompt).toEqual({ type: 'preset', preset: 'claude_code', append: expect.stringContaining('You are bot-a, a participant in the Bubble thread th_1') });
    // allowedTools would silently bypass canUseTool (engine-notes §1): never set.
    expect(options.allowedTools).toBeUndefined();
    expect(options.model).toBeUndefined();
    expect(options.tools).toBeUndefined();
    expect(options.resume).toBeUndefined();
  });

  it('carries the configured model, tools, prompt append, resume id and MCP servers', () => {
    const mcpServers = { bubble: { type: 'sdk' as const, name: 'bubble', instance: {} as never } };
    const options = buildQueryOptions({
      config: config({ model: 'claude-sonnet-4-5', tools: ['Read'], systemPrompt: { append: 'Be brief.' }, maxTurns: 5 }),
      threadId: 'th_1',
      cwd: '/ws',
      env: {},
      canUseTool,
      resume: 'sess-1',
      mcpServers,
    });
    expect(options).toMatchObject({ model: 'claude-sonnet-4-5', tools: ['Read'], maxTurns: 5, resume: 'sess-1', mcpServers });
    expect((options.systemPrompt as { append: string }).append).toMatch(/\n\nBe brief\.$/);
  });

  it('bypassPermissions also sets the flag the SDK requires', () => {
    const options = buildQueryOptions({ config: config({ permissionMode: 'bypassPermissions' }), threadId: 't', cwd: '/ws', env: {}, canUseTool });
    expect([options.permissionMode, options.allowDangerouslySkipPermissions]).toEqual(['bypassPermissions', true]);
  });
});
