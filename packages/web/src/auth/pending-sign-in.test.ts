import { describe, expect, it } from 'vitest';
import { PENDING_SIGN_IN_TTL_MS, parsePendingSignIn, safeReturnPath } from './pending-sign-in';

const pending = {
  issuer: 'https://idp.example/',
  clientId: 'spa',
  state: 's',
  nonce: 'n',
  codeVerifier: 'v',
  returnTo: '/threads/th_1',
  startedAt: 1_000,
};

describe('parsePendingSignIn', () => {
  it('reads a fresh one', () => {
    expect(parsePendingSignIn(JSON.stringify(pending), 2_000)).toEqual(pending);
  });
  it('is void after ten minutes, and for one from the future', () => {
    expect(parsePendingSignIn(JSON.stringify(pending), 1_000 + PENDING_SIGN_IN_TTL_MS + 1)).toBeNull();
    expect(parsePendingSignIn(JSON.stringify({ ...pending, startedAt: 10_000_000 }), 1_000)).toBeNull();
  });
  it.each([
    null,
    'x',
    '{}',
    JSON.stringify({ ...pending, state: '' }),
    JSON.stringify({ ...pending, codeVerifier: 1 }),
  ])('refuses %j', (text) => {
    expect(parsePendingSignIn(text, 2_000)).toBeNull();
  });
  it('never returns somewhere off this app', () => {
    expect(parsePendingSignIn(JSON.stringify({ ...pending, returnTo: 'https://evil.example/' }), 2_000)?.returnTo).toBe(
      '/',
    );
  });
});

describe('safeReturnPath', () => {
  it.each([
    ['/threads/th_1.sub-a8f3k-2q9', '/threads/th_1.sub-a8f3k-2q9'],
    ['/invite', '/invite'],
    ['/tokens?x=1#frag', '/tokens?x=1'],
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example/', '/'],
    ['javascript:alert(1)', '/'],
    ['/auth/callback', '/'],
    ['', '/'],
    // Another origin only once normalised.
    ['/.//evil.example/x', '/'],
    ['/./\\/evil.example/x', '/'],
    ['/a/..//evil.example/x', '/'],
    ['/%2e//evil.example/x', '/'],
    ['/x/../threads/t', '/threads/t'],
  ])('%j -> %j', (path, expected) => expect(safeReturnPath(path)).toBe(expected));
});
