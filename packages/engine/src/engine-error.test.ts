import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENGINE_ERROR_CODES, EngineError, isEngineError } from './engine-error.js';

describe('the engine error catalogue', () => {
  it('is documented: the README lists every code with its retryability', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const [code, entry] of Object.entries(ENGINE_ERROR_CODES)) {
      expect(readme).toContain(`| \`${code}\` | ${entry.retryable ? 'yes' : 'no'} |`);
    }
  });

  it('builds typed errors that carry code and retryability', () => {
    const error = new EngineError('run_queue_cancelled', 'gave up', { cause: 'why' });
    expect(isEngineError(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'EngineError',
      code: 'run_queue_cancelled',
      retryable: true,
      message: 'gave up',
      cause: 'why',
    });
    expect(isEngineError(new Error('x'))).toBe(false);
  });
});
