import type { Principal } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { lookalikeOf, nameKey } from './display-names.js';

const p = (principalId: string, displayName = principalId): Principal => ({
  principalId,
  kind: 'human',
  displayName,
  ownerPrincipalIds: [],
  createdAt: '2026-12-01T00:00:00.000Z',
});

describe('nameKey', () => {
  it.each([
    ['Alice', 'alice'],
    ['  ALICE  ', 'alice'],
    ['Alice   Liddell', 'alice liddell'],
    ['Ａｌｉｃｅ', 'alice'],
    ['Alice\tLiddell', 'alice liddell'],
  ])('%j -> %j', (name, key) => {
    expect(nameKey(name)).toBe(key);
  });
});

describe('lookalikeOf', () => {
  const people = [p('alice', 'Alice'), p('bob', 'Bob Stone'), p('helper', 'Helper')];
  it.each([
    ['alice', 'alice'],
    ['ALICE', 'alice'],
    ['bob stone', 'bob'],
    ['BOB', 'bob'],
    ['Bobby', null],
    ['Helper', null],
    ['helper', null],
  ])('%j -> %j (the bot itself is helper)', (name, twin) => {
    expect(lookalikeOf(name, people, 'helper')?.principalId ?? null).toBe(twin);
  });
});
