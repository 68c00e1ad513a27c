import { describe, expect, it } from 'vitest';
import { decideInviteAcceptance, isInviteOpen, type InviteState } from './invite-rules.js';

const NOW = '2026-12-01T10:00:00.000Z';
const base: InviteState = {
  role: 'member',
  expiresAt: '2026-12-08T10:00:00.000Z',
  maxUses: 1,
  uses: 0,
  revokedAt: null,
  creatorIsOwner: true,
};

describe('decideInviteAcceptance', () => {
  it.each<[string, Partial<InviteState>, 'owner' | 'member' | null, string]>([
    ['a fresh invite, a newcomer', {}, null, 'grant:member'],
    ['revoked', { revokedAt: NOW }, null, 'refuse'],
    ['expired now', { expiresAt: NOW }, null, 'refuse'],
    ['creator no longer an owner', { creatorIsOwner: false }, null, 'refuse'],
    ['used up, a newcomer', { uses: 1 }, null, 'refuse'],
    // protocol.md: an expired, used-up or revoked invite is 404, whoever opens it.
    ['used up, someone already in', { uses: 1 }, 'member', 'refuse'],
    ['used up, an owner', { uses: 1 }, 'owner', 'refuse'],
    ['revoked, someone already in', { revokedAt: NOW }, 'member', 'refuse'],
    ['expired, someone already in', { expiresAt: NOW }, 'member', 'refuse'],
    ['creator no longer an owner, someone already in', { creatorIsOwner: false }, 'member', 'refuse'],
    ['alive with uses left, someone already in', { maxUses: 2, uses: 1 }, 'member', 'already_joined'],
    ['an owner invite, a member', { role: 'owner' }, 'member', 'grant:owner'],
    ['a member invite, an owner', {}, 'owner', 'already_joined'],
    ['an owner invite, an owner', { role: 'owner', maxUses: 2, uses: 1 }, 'owner', 'already_joined'],
  ])('%s', (_name, over, existing, expected) => {
    const decision = decideInviteAcceptance({ ...base, ...over }, existing, NOW);
    expect(decision.kind === 'grant' ? `grant:${decision.role}` : decision.kind).toBe(expected);
  });

  it('says why a dead invite is refused, the same to someone already in as to a newcomer', () => {
    for (const existing of [null, 'member', 'owner'] as const) {
      expect(decideInviteAcceptance({ ...base, uses: 1 }, existing, NOW)).toEqual({
        kind: 'refuse',
        message: 'this invite was used 1 time, its limit',
      });
    }
  });

  it('is open only while it can let someone new in', () => {
    expect(isInviteOpen(base, NOW)).toBe(true);
    expect(isInviteOpen({ ...base, uses: 1 }, NOW)).toBe(false);
    expect(isInviteOpen({ ...base, creatorIsOwner: false }, NOW)).toBe(false);
    expect(isInviteOpen({ ...base, expiresAt: NOW }, NOW)).toBe(false);
  });
});
