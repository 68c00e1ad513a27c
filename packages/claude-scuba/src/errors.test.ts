import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ScubaError, SCUBA_ERROR_CODES } from './errors.js';

describe('error catalogue', () => {
  it('the README lists every code with its retry flag', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const [code, info] of Object.entries(SCUBA_ERROR_CODES)) {
      expect(readme).toContain(`| \`${code}\` | ${info.retryable ? 'yes' : 'no'} | ${info.description} |`);
    }
  });

  it('errors carry their code, retry flag and frozen problems', () => {
    const error = new ScubaError('config_invalid', 'bad', { problems: ['a', 'b'] });
    expect([error.code, error.retryable, error.problems]).toEqual(['config_invalid', false, ['a', 'b']]);
    expect(Object.isFrozen(error.problems)).toBe(true);
  });
});
