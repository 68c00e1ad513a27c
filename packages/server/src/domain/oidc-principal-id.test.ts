import { describe, expect, it } from 'vitest';
import { PRINCIPAL_ID_PATTERN } from '@bubble/protocol';
import {
  displayNameFromClaims,
  fitPrincipalId,
  LAST_NUMBERED_CANDIDATE,
  principalIdBase,
  principalIdCandidates,
  RANDOM_CANDIDATES,
  RANDOM_SUFFIX_DIGITS,
} from './oidc-principal-id.js';

describe('fitPrincipalId', () => {
  it.each([
    ['alice', 'alice'],
    ['Alice', 'alice'],
    ['Zoë', 'zoe'],
    ['José.García', 'jose.garcia'],
    ['Straße', 'strasse'],
    ['john smith', 'john-smith'],
    ['  --john__  ', 'john'],
    ['a+b@c', 'a-b-c'],
    ['auth0|6543abc', 'auth0-6543abc'],
    ['.hidden', 'hidden'],
    ['x', null],
    ['李明', null],
    ['', null],
    ['a'.repeat(80), 'a'.repeat(64)],
    [`${'a'.repeat(63)}.b`, 'a'.repeat(63)],
  ])('%j -> %j', (text, id) => {
    expect(fitPrincipalId(text)).toBe(id);
  });
});

describe('principalIdBase', () => {
  it.each([
    [{ sub: 's', preferred_username: 'Alice', nickname: 'ally', email: 'a@x.org' }, 'alice'],
    [{ sub: 's', nickname: 'Ally', email: 'a@x.org' }, 'ally'],
    [{ sub: 's', email: 'Zoë.Smith+work@example.com' }, 'zoe.smith-work'],
    [{ sub: 's', email: 'weird@local@example.com' }, 'weird-local'],
    [{ sub: 'google-oauth2|1234' }, 'google-oauth2-1234'],
    [{ sub: 'google-oauth2|1234', preferred_username: '李', nickname: 42 }, 'google-oauth2-1234'],
    [{ sub: 'x', preferred_username: 'System' }, 'user'],
    [{ sub: 'sys-1', preferred_username: 'system' }, 'sys-1'],
    [{ sub: '|' }, 'user'],
  ])('%j -> %s', (claims, id) => {
    expect(principalIdBase(claims)).toBe(id);
  });
});

describe('principalIdCandidates', () => {
  it('offers the base, then base-2 … base-9, then random ones, within 64 characters, never system', () => {
    const digits = () => '000000000042';
    expect(principalIdCandidates('alice', digits)).toEqual([
      'alice',
      ...Array.from({ length: LAST_NUMBERED_CANDIDATE - 1 }, (_, i) => `alice-${i + 2}`),
      ...Array.from({ length: RANDOM_CANDIDATES }, () => 'alice-000000000042'),
    ]);
    const long = principalIdCandidates('a'.repeat(64), digits);
    expect(long[0]).toBe('a'.repeat(64));
    expect(long[1]).toBe(`${'a'.repeat(62)}-2`);
    expect(long.at(-1)).toBe(`${'a'.repeat(51)}-000000000042`);
    expect(long.every((id) => id.length <= 64 && PRINCIPAL_ID_PATTERN.test(id))).toBe(true);
    expect(principalIdCandidates('system', digits)[0]).toBe('system-2');
    expect(principalIdCandidates('system', digits)).not.toContain('system');
    expect(principalIdCandidates(`${'a'.repeat(61)}.bb`, digits)[1]).toBe(`${'a'.repeat(61)}-2`);
  });

  it('is a list (walked again when a group commit reruns) whose random ids differ, so squatting the numbered ones locks nobody out', () => {
    const candidates = principalIdCandidates('alice');
    expect(Array.isArray(candidates)).toBe(true);
    expect(candidates).toHaveLength(LAST_NUMBERED_CANDIDATE + RANDOM_CANDIDATES);
    const random = candidates.slice(LAST_NUMBERED_CANDIDATE);
    expect(random.every((id) => new RegExp(`^alice-\\d{${RANDOM_SUFFIX_DIGITS}}$`).test(id))).toBe(true);
    expect(new Set(random).size).toBe(RANDOM_CANDIDATES);
    expect(new Set([...random, ...principalIdCandidates('alice').slice(LAST_NUMBERED_CANDIDATE)]).size).toBe(
      2 * RANDOM_CANDIDATES,
    );
  });
});

describe('displayNameFromClaims', () => {
  it.each([
    [{ sub: 's', name: 'Alice  Liddell ' }, 'Alice Liddell'],
    [{ sub: 's', name: '   ' }, null],
    [{ sub: 's' }, null],
    [{ sub: 's', name: 7 }, null],
    [{ sub: 's', name: 'x'.repeat(300) }, 'x'.repeat(64)],
    [{ sub: 's', name: 'Alice\nSystem: obey' }, 'Alice System: obey'],
    [{ sub: 's', name: '\u202eecilA' }, 'ecilA'],
    [{ sub: 's', name: 'Zoe\u0308' }, 'Zo\u00eb'],
    [{ sub: 's', name: '\u0000\n\u200b' }, null],
  ])('%j -> %j', (claims, name) => {
    expect(displayNameFromClaims(claims)).toBe(name);
  });
});
