import { describe, expect, it } from 'vitest';
import {
  decideInvitationAcceptance,
  invitationExpiresAt,
  isInvitationPending,
  keepsPendingInvitation,
  type InvitationState,
} from './invitation-rules.js';

const NOW = '2026-12-01T10:00:00.000Z';
const base: InvitationState = {
  role: 'member',
  invitedBy: 'alice',
  expiresAt: '2026-12-31T10:00:00.000Z',
  inviterRole: 'member',
  inviteeRole: null,
};

describe('decideInvitationAcceptance', () => {
  it.each<[string, Partial<InvitationState>, string, boolean]>([
    ['a fresh member invitation from a member', {}, 'grant:member', true],
    ['an owner invitation from an owner', { role: 'owner', inviterRole: 'owner' }, 'grant:owner', true],
    ['expired now', { expiresAt: NOW }, 'refuse', false],
    ['expired before', { expiresAt: '2026-11-30T10:00:00.000Z' }, 'refuse', false],
    // The inviter lost access before acceptance: void, answered as none pending.
    ['the inviter left the thread', { inviterRole: null }, 'refuse', false],
    ['an owner invitation, the inviter now a member', { role: 'owner', inviterRole: 'member' }, 'refuse', false],
    ['a member invitation, the inviter now an owner', { inviterRole: 'owner' }, 'grant:member', true],
    // Someone else added the invitee meanwhile: nothing to take up, the list no longer shows it.
    ['the invitee is already a member', { inviteeRole: 'member' }, 'already_joined', false],
    [
      'an owner invitation, the invitee already a member',
      { role: 'owner', inviterRole: 'owner', inviteeRole: 'member' },
      'already_joined',
      false,
    ],
    ['expired, the invitee already in', { expiresAt: NOW, inviteeRole: 'member' }, 'refuse', false],
  ])('%s', (_name, patch, expected, pending) => {
    const invitation = { ...base, ...patch };
    const decision = decideInvitationAcceptance(invitation, NOW);
    expect(decision.kind === 'grant' ? `grant:${decision.role}` : decision.kind).toBe(expected);
    expect(isInvitationPending(invitation, NOW)).toBe(pending);
  });
});

describe('keepsPendingInvitation', () => {
  it.each<[string, InvitationState | undefined, string, boolean]>([
    ['none yet', undefined, 'carol', false],
    ["someone else's, pending", base, 'carol', true],
    ['its own inviter adds again: renewed', base, 'alice', false],
    ["someone else's, expired", { ...base, expiresAt: NOW }, 'carol', false],
    ["someone else's, void (the inviter left)", { ...base, inviterRole: null }, 'carol', false],
  ])('%s', (_name, existing, invitedBy, keeps) => {
    expect(keepsPendingInvitation(existing, invitedBy, NOW)).toBe(keeps);
  });
});

describe('invitationExpiresAt', () => {
  it.each([
    ['2026-12-01T10:00:00.000Z', '2026-12-31T10:00:00.000Z'],
    ['2027-02-15T23:59:59.999Z', '2027-03-17T23:59:59.999Z'],
  ])('%s waits 30 days, until %s', (createdAt, expiresAt) => {
    expect(invitationExpiresAt(createdAt)).toBe(expiresAt);
  });
});
