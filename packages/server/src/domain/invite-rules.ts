import type { Role } from '@bubble/protocol';

/** What the store knows about an invite when someone accepts it. */
export interface InviteState {
  role: Role;
  expiresAt: string;
  maxUses: number;
  uses: number;
  revokedAt: string | null;
  /** Whether the invite's creator still holds a live owner grant on the thread. */
  creatorIsOwner: boolean;
}

export type InviteDecision =
  | { kind: 'refuse'; message: string }
  /** The caller already holds this grant (or a stronger one): answered unchanged, no use counted. */
  | { kind: 'already_joined' }
  /** Grant `role` (new, or member to owner) and count one use. */
  | { kind: 'grant'; role: Role };

/**
 * Whether an invite lets `existingRole` (the caller's live role on the thread, or null) in now.
 * Dead links answer the same way to everyone, whoever asks (protocol.md: an expired, used-up or
 * revoked invite is 404): revoked, expired, used up, or no longer backed by an owner. While the
 * link is alive, someone already in the thread reopening it (a reload, a second click) is told
 * they are in without spending a use. Acceptance never lowers a role: an owner accepting a member
 * invite stays owner.
 */
export function decideInviteAcceptance(invite: InviteState, existingRole: Role | null, nowIso: string): InviteDecision {
  if (invite.revokedAt !== null) return { kind: 'refuse', message: 'this invite was revoked' };
  if (invite.expiresAt <= nowIso) return { kind: 'refuse', message: `this invite expired at ${invite.expiresAt}` };
  if (invite.uses >= invite.maxUses)
    return {
      kind: 'refuse',
      message: `this invite was used ${invite.uses} time${invite.uses === 1 ? '' : 's'}, its limit`,
    };
  if (!invite.creatorIsOwner)
    return {
      kind: 'refuse',
      message: 'this invite no longer works: whoever created it is no longer an owner of the thread',
    };
  if (existingRole === 'owner' || existingRole === invite.role) return { kind: 'already_joined' };
  return { kind: 'grant', role: invite.role };
}

/** Whether an invite can still be accepted by someone new (what the owners' list shows). */
export const isInviteOpen = (invite: InviteState, nowIso: string): boolean =>
  invite.revokedAt === null && invite.expiresAt > nowIso && invite.creatorIsOwner && invite.uses < invite.maxUses;
