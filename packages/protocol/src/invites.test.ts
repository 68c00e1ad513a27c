import { describe, expect, it } from 'vitest';
import { InfoSchema } from './info.js';
import { AcceptInviteRequestSchema, CreateInviteRequestSchema, INVITE_LIMITS, InviteSchema } from './invites.js';
import { OwnTokenListResponseSchema } from './principal.js';

describe('CreateInviteRequestSchema', () => {
  it('fills the defaults protocol.md names: member, 7 days, one use', () => {
    const defaults = { role: 'member', expiresInSeconds: 7 * 24 * 3600, maxUses: 1 };
    expect(CreateInviteRequestSchema.parse(undefined)).toEqual(defaults);
    expect(CreateInviteRequestSchema.parse({})).toEqual(defaults);
    expect(CreateInviteRequestSchema.parse({ role: 'owner', expiresInSeconds: 60, maxUses: 5 })).toEqual({
      role: 'owner',
      expiresInSeconds: 60,
      maxUses: 5,
    });
  });

  it.each([
    [{ role: 'admin' }],
    [{ expiresInSeconds: 0 }],
    [{ expiresInSeconds: 1.5 }],
    [{ expiresInSeconds: INVITE_LIMITS.maxExpiresInSeconds + 1 }],
    [{ maxUses: 0 }],
    [{ maxUses: '3' }],
    [{ maxUses: INVITE_LIMITS.maxMaxUses + 1 }],
  ])('refuses %j', (body) => {
    expect(CreateInviteRequestSchema.safeParse(body).success).toBe(false);
  });
});

describe('the invite and token shapes', () => {
  it('parses the invite of protocol.md', () => {
    const invite = {
      inviteId: 'inv_1',
      threadId: 'th_1',
      role: 'member',
      createdBy: 'alice',
      expiresAt: '2026-12-08T10:00:00.000Z',
      maxUses: 1,
      uses: 0,
      token: 'bubble_invite_x',
    };
    expect(InviteSchema.parse(invite)).toEqual(invite);
    expect(AcceptInviteRequestSchema.safeParse({}).success).toBe(false);
  });

  it('reads current on one of the caller own tokens', () => {
    const tokens = {
      tokens: [
        { tokenId: 'tok_1', createdAt: 'x', current: true },
        { tokenId: 'tok_2', createdAt: 'y' },
      ],
    };
    expect(OwnTokenListResponseSchema.parse(tokens)).toEqual(tokens);
  });

  it('reads /v1/info with and without auth.oidc', () => {
    const base = { name: 'bubble', version: '0.1.0', protocol: 1, extensions: { artifacts: { version: 1 } } };
    expect(InfoSchema.parse(base)).toEqual(base);
    const withOidc = {
      ...base,
      auth: {
        oidc: { issuer: 'https://example.eu.auth0.com/', clientId: 'abc', audience: 'https://bubble.example.com' },
      },
    };
    expect(InfoSchema.parse(withOidc)).toEqual(withOidc);
  });
});
