import { INVITATION_LIMITS, type Role } from '@bubble/protocol';

/**
 * Consent (protocol.md, Threads and grants): a person the caller cannot see is never put on a
 * thread at once; they get a pending invitation, which they accept or decline.
 */

/** What the store knows about a pending invitation when its invitee lists or accepts it. */
export interface InvitationState {
  role: Role;
  /** Who made it. */
  invitedBy: string;
  expiresAt: string;
  /** The inviter's live role on the thread now, null when they hold no live grant on it. */
  inviterRole: Role | null;
  /** The invitee's live role on the thread now, null when they hold none. */
  inviteeRole: Role | null;
}

export type InvitationDecision =
  | { kind: 'refuse'; message: string }
  /** The invitee is already on the thread (someone else added them meanwhile): answered unchanged, the invitation dropped. */
  | { kind: 'already_joined' }
  | { kind: 'grant'; role: Role };

/** When an invitation made at `createdAt` stops waiting. */
export const invitationExpiresAt = (createdAt: string): string =>
  new Date(Date.parse(createdAt) + INVITATION_LIMITS.expiresAfterSeconds * 1000).toISOString();

/**
 * Whether the invitee may take up the invitation now. It is void once it expired, and once its
 * inviter no longer could have made it: they hold no live grant on the thread any more, or the
 * invitation is for `owner` and they are no longer an owner. A void invitation answers as none
 * pending (404): the invitee is not told who left.
 */
export function decideInvitationAcceptance(invitation: InvitationState, nowIso: string): InvitationDecision {
  if (invitation.expiresAt <= nowIso)
    return { kind: 'refuse', message: `the invitation expired at ${invitation.expiresAt}` };
  if (invitation.inviterRole === null || (invitation.role === 'owner' && invitation.inviterRole !== 'owner'))
    return { kind: 'refuse', message: 'no pending invitation to this thread' };
  if (invitation.inviteeRole !== null) return { kind: 'already_joined' };
  return { kind: 'grant', role: invitation.role };
}

/** Whether the invitee's list shows it: it could be accepted now and would add them. */
export const isInvitationPending = (invitation: InvitationState, nowIso: string): boolean =>
  decideInvitationAcceptance(invitation, nowIso).kind === 'grant';

/**
 * Whether a new add leaves the invitation already pending as it is: one that someone else made and
 * that could still be taken up stays theirs (another participant cannot swap its inviter or role,
 * nor keep it alive past its 30 days by adding again); the same inviter's own add renews it.
 */
export const keepsPendingInvitation = (
  existing: InvitationState | undefined,
  invitedBy: string,
  nowIso: string,
): boolean => existing !== undefined && existing.invitedBy !== invitedBy && isInvitationPending(existing, nowIso);
