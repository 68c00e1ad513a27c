import { describe, expect, it } from 'vitest';
import { isUserToken, tokenFromFragment } from './api';

const T = `bubble_user_${'A'.repeat(43)}`;

describe('tokenFromFragment', () => {
  it.each([
    [`#token=${T}`, T],
    [`token=${T}`, T],
    [`#x=1&token=${T}`, T],
    [`#token=bubble_agent_${'A'.repeat(43)}`, null],
    ['#token=', null],
    ['', null],
  ])('%s', (hash, expected) => expect(tokenFromFragment(hash)).toBe(expected));

  it('accepts only user tokens', () => {
    expect(isUserToken(` ${T} `)).toBe(true);
    expect(isUserToken('hello')).toBe(false);
  });
});
