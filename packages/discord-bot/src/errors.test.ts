import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DISCORD_BOT_ERROR_CODES } from './errors.js';

describe('error catalogue', () => {
  it('the README lists every code with its retryability', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const [code, entry] of Object.entries(DISCORD_BOT_ERROR_CODES)) {
      expect(readme).toContain(`| \`${code}\` | ${entry.retryable ? 'yes' : 'no'} |`);
    }
  });
});
