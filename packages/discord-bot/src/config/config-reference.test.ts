import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { discordConfigReference } from './config-reference.js';

describe('CONFIG.md', () => {
  it('is what the config schema renders (run `npm run docs:config` after changing the schema)', () => {
    const committed = readFileSync(new URL('../../CONFIG.md', import.meta.url), 'utf8');
    expect(committed).toBe(discordConfigReference());
  });

  it('lists every key of every section, with its default and meaning', () => {
    const page = discordConfigReference();
    expect(page).toContain('| `secretsKey` | secret:');
    expect(page).toContain('| `discord.applicationId` | string | **required** |');
    expect(page).toContain('| `limits.maxConcurrentRuns` | whole number, 1 or more | `2` |');
    expect(page).toContain('| `dashboard.port` | whole number, 0 to 65535 | `7790` |');
  });
});
