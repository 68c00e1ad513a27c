import { describe, expect, it } from 'vitest';
import { isUsable, parseSession, renewAt, sessionFromAnswer, type OidcSession } from './oidc-session';

const base = { issuer: 'https://idp.example/', clientId: 'spa' };
const now = 1_000_000;

function jwt(claims: Record<string, unknown>): string {
  const b64 = (v: unknown) => btoa(JSON.stringify(v)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${b64({ alg: 'RS256' })}.${b64(claims)}.sig`;
}

describe('sessionFromAnswer', () => {
  it('counts the lifetime from when the answer arrived', () => {
    const s = sessionFromAnswer(
      base,
      { access_token: 'at1', expires_in: 3600, refresh_token: 'rt1', id_token: 'id1' },
      now,
    );
    expect(s).toEqual({
      ...base,
      accessToken: 'at1',
      receivedAt: now,
      expiresAt: now + 3_600_000,
      refreshToken: 'rt1',
      idToken: 'id1',
    });
  });

  it('keeps the refresh token and ID token a refresh answer leaves out, and takes rotated ones', () => {
    const first = sessionFromAnswer(
      base,
      { access_token: 'at1', expires_in: 60, refresh_token: 'rt1', id_token: 'id1' },
      now,
    );
    const kept = sessionFromAnswer(first, { access_token: 'at2', expires_in: 60 }, now + 50_000);
    expect(kept).toMatchObject({ accessToken: 'at2', refreshToken: 'rt1', idToken: 'id1', expiresAt: now + 110_000 });
    const rotated = sessionFromAnswer(
      kept,
      { access_token: 'at3', expires_in: 60, refresh_token: 'rt2' },
      now + 100_000,
    );
    expect(rotated.refreshToken).toBe('rt2');
  });

  it("falls back to the JWT's exp − iat, then to five minutes, when there is no expires_in", () => {
    expect(sessionFromAnswer(base, { access_token: jwt({ iat: 100, exp: 220 }) }, now).expiresAt).toBe(now + 120_000);
    expect(sessionFromAnswer(base, { access_token: 'opaque' }, now).expiresAt).toBe(now + 300_000);
    expect(sessionFromAnswer(base, { access_token: 'opaque', expires_in: 0 }, now).expiresAt).toBe(now + 300_000);
  });
});

describe('renewAt', () => {
  const session = (lifetimeS: number, refreshToken?: string): OidcSession =>
    sessionFromAnswer(
      base,
      { access_token: 'a', expires_in: lifetimeS, ...(refreshToken ? { refresh_token: refreshToken } : {}) },
      now,
    );

  it('renews a minute before a long-lived token expires', () => {
    expect(renewAt(session(86_400, 'r'))).toBe(now + 86_400_000 - 60_000);
  });

  it('renews a short-lived token at three quarters of its life', () => {
    expect(renewAt(session(20, 'r'))).toBe(now + 15_000);
  });

  it('does not renew without a refresh token', () => {
    expect(renewAt(session(3600))).toBeNull();
  });
});

describe('isUsable', () => {
  it('stops sending a token five seconds before it expires', () => {
    const s = sessionFromAnswer(base, { access_token: 'a', expires_in: 60 }, now);
    expect(isUsable(s, now + 54_999)).toBe(true);
    expect(isUsable(s, now + 55_000)).toBe(false);
  });
});

describe('parseSession', () => {
  const good = { ...base, accessToken: 'a', receivedAt: 1, expiresAt: 2, refreshToken: 'r' };
  it('reads a stored session back', () => {
    expect(parseSession(JSON.stringify(good))).toEqual(good);
  });
  it.each([
    null,
    '',
    'not json',
    '[]',
    'null',
    JSON.stringify({ ...good, accessToken: '' }),
    JSON.stringify({ ...good, expiresAt: '2' }),
    JSON.stringify({ ...good, refreshToken: 7 }),
  ])('refuses %j', (text) => expect(parseSession(text)).toBeNull());
});
