import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ErrorCodeSchema, errorCodeForStatus } from './errors.js';

describe('the error catalogue', () => {
  const spec = readFileSync(fileURLToPath(new URL('../../../../shared/spec/protocol.md', import.meta.url)), 'utf8');

  it.each(ErrorCodeSchema.options)('%s is in protocol.md with the same status', (code) => {
    const row = spec.split('\n').find((line) => line.startsWith(`| \`${code}\``));
    expect(row, `protocol.md has no row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${ERROR_CATALOGUE[code].status} |`);
  });

  it('lists every code of protocol.md', () => {
    const documented = [...spec.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((match) => match[1]);
    expect([...documented].sort()).toEqual([...ErrorCodeSchema.options].sort());
  });

  it('maps statuses back to codes', () => {
    expect(errorCodeForStatus(404)).toBe('not_found');
    expect(errorCodeForStatus(503)).toBe('internal');
  });
});
