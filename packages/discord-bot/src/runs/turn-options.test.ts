import { describe, expect, it } from 'vitest';
import {
  AGENTIC_TOOLS,
  buildTurnOptions,
  CHAT_TOOLS,
  GITHUB_DOMAINS,
  UNASKED_AGENTIC_TOOLS,
  type TurnOptionsInput,
} from './turn-options.js';

const base: TurnOptionsInput = {
  kind: 'chat',
  cwd: '/w/t1',
  env: { PATH: '/bin', TMPDIR: '/tmp/x' },
  canUseTool: async () => ({ behavior: 'allow', updatedInput: {} }),
  isolation: { kind: 'sandbox', privatePaths: ['/srv/bot/state.db', '/srv/bot/claude'] },
  approvals: 'none',
};

describe('buildTurnOptions', () => {
  it('chat: web tools only, as the boundary and auto-approved; a custom prompt; 10 turns', () => {
    const o = buildTurnOptions(base);
    expect(o.tools).toEqual([...CHAT_TOOLS]);
    expect(o.allowedTools).toEqual([...CHAT_TOOLS]);
    expect(o.permissionMode).toBe('default');
    expect(o.maxTurns).toBe(10);
    // Rendered fresh on every request: a thread's mode can change within one session.
    expect(o.systemPrompt).toMatchObject({ type: 'custom', snapshot: false });
    expect(o.sandbox).toBeUndefined();
    expect(o.settingSources).toEqual([]);
    // Nobody is asked in chat: anything that would prompt is denied, and the callback is not passed.
    expect(o.canUseTool).toBeUndefined();
    expect(o.permissionPrompts).toBe('none');
  });

  it('ask: chat tools, 6 turns, no session kept', () => {
    const o = buildTurnOptions({ ...base, kind: 'ask', resume: 'ignored?' });
    expect(o.maxTurns).toBe(6);
    expect(o.persistSession).toBe(false);
  });

  it('agentic in the sandbox: the eight tools, bypassPermissions only there, Claude Code prompt with the append', () => {
    const o = buildTurnOptions({ ...base, kind: 'agentic', agenticAppend: 'Be careful.' });
    expect(o.tools).toEqual([...AGENTIC_TOOLS]);
    expect(o.allowedTools).toEqual([...AGENTIC_TOOLS]);
    expect(o.permissionMode).toBe('bypassPermissions');
    expect(o.allowDangerouslySkipPermissions).toBe(true);
    expect(o.sandbox?.enabled).toBe(true);
    expect(o.maxTurns).toBe(40);
    expect(o.systemPrompt).toMatchObject({ type: 'preset', preset: 'claude_code', snapshot: false });
    expect((o.systemPrompt as { append: string }).append).toContain('Be careful.');
  });

  it('agentic with buttons: the same eight tools; Write, Edit and Bash left to ask, in default permissions', () => {
    const o = buildTurnOptions({ ...base, kind: 'agentic', approvals: 'buttons' });
    expect(o.tools).toEqual([...AGENTIC_TOOLS]);
    expect(o.allowedTools).toEqual([...UNASKED_AGENTIC_TOOLS]);
    expect(o.permissionMode).toBe('default');
    expect(o.canUseTool).toBe(base.canUseTool);
    expect(o.permissionPrompts).toBeUndefined();
  });

  it('agentic without the sandbox (off or unavailable): no tools at all, never bypassPermissions', () => {
    for (const isolation of [{ kind: 'off' as const }, { kind: 'unavailable' as const, reason: 'no bwrap' }]) {
      const o = buildTurnOptions({ ...base, kind: 'agentic', isolation });
      expect(o.tools).toEqual([]);
      expect(o.allowedTools).toBeUndefined();
      expect(o.permissionMode).toBe('default');
      expect(o.sandbox).toBeUndefined();
    }
  });

  it('a turn with a GitHub token may reach GitHub from the sandbox, and nothing else', () => {
    const o = buildTurnOptions({ ...base, kind: 'agentic', githubDomains: true });
    expect(o.sandbox?.network?.allowedDomains).toEqual([...GITHUB_DOMAINS]);
    expect(buildTurnOptions({ ...base, kind: 'agentic' }).sandbox?.network).toBeUndefined();
  });
});
