import { describe, expect, it } from 'vitest';
import { DEMO_SCRIPT, DEMO_TRIES } from './demo-script.js';
import { OFFLINE_REPLY } from './model-double.js';
import { parseScript } from './parse-script.js';
import type { RequestInfo } from './request-info.js';
import { selectRule } from './select-rule.js';

const info = (over: Partial<RequestInfo>): RequestInfo => ({
  kind: 'main',
  stream: true,
  model: 'm',
  lastUserText: '',
  toolResults: [],
  subagent: false,
  sessionId: null,
  taskNotification: null,
  ...over,
});

const script = parseScript(DEMO_SCRIPT);
const ruleFor = (over: Partial<RequestInfo>, used: number[] = []) => {
  const index = selectRule(script, used, info(over));
  return index === null ? null : (script[index]!.name ?? null);
};

describe('the demo script', () => {
  it('is a valid script whose rules all answer again and again', () => {
    expect(script.length).toBe(DEMO_SCRIPT.length);
    expect(script.every((rule) => rule.times === 'always')).toBe(true);
    // Used a thousand times, every rule still answers.
    expect(
      ruleFor(
        { lastUserText: 'run a command' },
        script.map(() => 1000),
      ),
    ).toBe('demo-command');
  });

  it.each(DEMO_TRIES.map((t) => [t.prompt, t.rule]))('"%s" is answered by %s', (prompt, rule) => {
    expect(ruleFor({ lastUserText: prompt })).toBe(rule);
    // As the bot hears it with several people on the thread, and with other casing.
    expect(ruleFor({ lastUserText: `You (you): ${prompt.toUpperCase()}` })).toBe(rule);
  });

  it('answers tool results by tool and outcome, before any text rule', () => {
    const result = (toolName: string, isError: boolean) => ({
      toolResults: [{ toolUseId: 'toolu_1', toolName, isError }],
      lastUserText: 'run a command',
    });
    expect(ruleFor(result('Bash', false))).toBe('demo-command-ran');
    expect(ruleFor(result('Bash', true))).toBe('demo-command-refused');
    expect(ruleFor(result('mcp__bubble__write_artifact', false))).toBe('demo-artifact-written');
    expect(ruleFor(result('mcp__bubble__write_artifact', true))).toBe('demo-artifact-refused');
    expect(ruleFor(result('Agent', false))).toBe('demo-helper-back');
  });

  it("gives a sub-agent its report, whatever its prompt says, and the background helper's end a line", () => {
    expect(ruleFor({ subagent: true, kind: 'subagent', lastUserText: 'run a command and show me code' })).toBe(
      'demo-helper-report',
    );
    expect(ruleFor({ taskNotification: { taskId: 't', toolUseId: 'u', status: 'completed' } })).toBe(
      'demo-helper-background-done',
    );
  });

  it('answers anything else with what this is and every thing to try', () => {
    expect(ruleFor({ lastUserText: 'hello there' })).toBe('demo-fallback');
    const fallback = script.find((r) => r.name === 'demo-fallback')!;
    const text = fallback.reply!.map((b) => (b.type === 'text' ? b.text : '')).join('');
    expect(text).toContain(OFFLINE_REPLY);
    for (const t of DEMO_TRIES) expect(text).toContain(`**${t.prompt}**`);
  });
});
