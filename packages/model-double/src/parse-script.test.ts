import { describe, expect, it } from 'vitest';
import { parseScript, parseScriptJson, ScriptError } from './parse-script.js';

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ScriptError) return err.problems;
    throw err;
  }
  throw new Error('expected a ScriptError');
}

describe('parseScript', () => {
  it('accepts every block kind, errors and disconnects', () => {
    const script = parseScript([
      { match: { text: 'a' }, reply: [{ type: 'text', text: 'x', chunkWords: 2, delayMs: 5 }] },
      {
        reply: [
          { type: 'thinking', thinking: 't' },
          { type: 'tool_use', name: 'Bash', input: { command: 'ls' } },
        ],
      },
      { times: 'always', error: { status: 429, retryAfterSeconds: 3 } },
      { times: 3, disconnect: true },
    ]);
    expect(script).toHaveLength(4);
  });

  it('lists every problem with where it is', () => {
    const problems = problemsOf(() =>
      parseScript([
        { reply: [{ type: 'text' }] },
        { match: { text: { regex: '(' } }, reply: [{ type: 'text', text: 'x' }] },
        { error: { status: 418 } },
        { reply: [{ type: 'text', text: 'x' }], error: { status: 400 } },
        { times: 0, reply: [{ type: 'text', text: 'x' }], bogus: 1 },
      ]),
    );
    expect(problems.some((p) => p.startsWith('rule 0.reply[0].text:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('rule 1.match.text:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('rule 2.error.status:'))).toBe(true);
    expect(problems).toContain('rule 3: a rule needs exactly one of "reply", "error" or "disconnect"');
    expect(problems.some((p) => p.startsWith('rule 4.times:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('rule 4:') && p.includes('bogus'))).toBe(true);
  });

  it('rejects a script that is not a list, and bad JSON', () => {
    expect(problemsOf(() => parseScript({ rules: [] }))[0]).toMatch(/^script: /);
    expect(problemsOf(() => parseScriptJson('[{'))[0]).toMatch(/^not valid JSON: /);
  });
});
