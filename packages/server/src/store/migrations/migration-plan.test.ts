import { describe, expect, it } from 'vitest';
import { latestVersion, pendingMigrations, SchemaTooNewError, type Migration } from './migration-plan.js';

const m = (version: number): Migration => ({ version, description: `m${version}`, sql: '' });

describe('pendingMigrations', () => {
  it('answers the versions not applied yet, in order', () => {
    expect(pendingMigrations([m(1), m(2), m(3)], []).map((x) => x.version)).toEqual([1, 2, 3]);
    expect(pendingMigrations([m(1), m(2), m(3)], [1, 2]).map((x) => x.version)).toEqual([3]);
    expect(pendingMigrations([m(1), m(2)], [2, 1])).toEqual([]);
    expect(latestVersion([m(1), m(2)])).toBe(2);
    expect(latestVersion([])).toBe(0);
  });

  it('refuses a database migrated by a newer server', () => {
    expect(() => pendingMigrations([m(1), m(2)], [1, 2, 3])).toThrow(SchemaTooNewError);
    expect(() => pendingMigrations([m(1), m(2)], [1, 2, 3])).toThrow(
      /schema version 3, newer than this server knows \(2\)/,
    );
  });

  it('refuses a list with a gap or out of order', () => {
    expect(() => pendingMigrations([m(1), m(3)], [])).toThrow(/migration 2 is numbered 3/);
    expect(() => pendingMigrations([m(2), m(1)], [])).toThrow(/migration 1 is numbered 2/);
  });
});
