import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scubaConfigReference } from './config-reference.js';

describe('CONFIG.md', () => {
  it('is what the config schema renders (run `npm run docs:config` after changing the schema)', () => {
    const committed = readFileSync(new URL('../../CONFIG.md', import.meta.url), 'utf8');
    expect(committed).toBe(scubaConfigReference());
  });

  it('lists every key of every section, with its default and meaning', () => {
    const page = scubaConfigReference();
    expect(page).toContain('| `bubble.token` | secret:');
    expect(page).toContain('| `claude.maxTurns` | whole number, 1 or more | `40` | Model round-trips per turn. |');
    expect(page).toContain('| `approvals.timeoutSeconds` | whole number, 1 or more | `600` |');
    expect(page).toContain('| `backlog.onResume` | one of `"catch_up"`, `"skip_to_head"` | `"catch_up"` |');
    expect(page).toMatch(/## `bubble` \(required\)/);
  });
});
