import { assertNever } from '@bubble/protocol';
import { notFound } from '../../errors/bubble-error.js';
import {
  decideInvitationAcceptance,
  invitationExpiresAt,
  isInvitationPending,
  keepsPendingInvitation,
} from '../../domain/invitation-rules.js';
import type { BubbleStore } from '../store.js';
import type { SqliteStoreContext } from './sqlite-context.js';
import { toGrant, toInvitation, toInvitationState, type GrantRow, type InvitationRow } from './sqlite-rows.js';

type InvitationMethods = Pick<
  BubbleStore,
  'inviteToThread' | 'listPendingInvitations' | 'acceptInvitation' | 'declineInvitation'
>;

/** Pending invitations (Consent): one per person and thread, never an event, until the person accepts. */
export function invitationMethods({
  st,
  write,
  now,
  getPrincipalSync,
  grantInJob,
}: SqliteStoreContext): InvitationMethods {
  return {
    inviteToThread: (input) =>
      write((_emit, nowIso) => {
        if (getPrincipalSync(input.principalId)?.kind !== 'human') return;
        if (!st.threadById.get(input.threadId)) throw notFound(`thread ${input.threadId} not found`);
        if (st.liveGrant.get(input.threadId, input.principalId)) return;
        const existing = st.invitation.get(input.threadId, input.principalId) as InvitationRow | undefined;
        if (keepsPendingInvitation(existing && toInvitationState(existing), input.invitedBy, nowIso)) return;
        st.deleteInvitation.run(input.threadId, input.principalId);
        st.insertInvitation.run(
          input.threadId,
          input.principalId,
          input.role,
          input.invitedBy,
          nowIso,
          invitationExpiresAt(nowIso),
        );
        st.dropExpiredInvitations.run(input.principalId, nowIso);
        st.dropOldestInvitations.run({ principalId: input.principalId, keep: input.maxPending });
      }),

    listPendingInvitations: async (principalId) => {
      const nowIso = now().toISOString();
      return (st.invitationsOf.all(principalId) as InvitationRow[])
        .filter((row) => isInvitationPending(toInvitationState(row), nowIso))
        .map(toInvitation);
    },

    acceptInvitation: (input) =>
      write((emit, nowIso) => {
        const row = st.invitation.get(input.threadId, input.principalId) as InvitationRow | undefined;
        if (row === undefined) throw notFound(`no pending invitation to thread ${input.threadId}`);
        const decision = decideInvitationAcceptance(toInvitationState(row), nowIso);
        switch (decision.kind) {
          case 'refuse':
            // A void one stays hidden (a failed job writes nothing) until it expires or drops as the oldest.
            throw notFound(`no pending invitation to thread ${input.threadId}`);
          case 'already_joined':
            st.deleteInvitation.run(input.threadId, input.principalId);
            return {
              grant: toGrant(st.liveGrant.get(input.threadId, input.principalId) as GrantRow),
              change: 'unchanged' as const,
            };
          case 'grant':
            st.deleteInvitation.run(input.threadId, input.principalId);
            return grantInJob(
              {
                threadId: input.threadId,
                principalId: input.principalId,
                role: decision.role,
                by: row.invited_by,
                mayChangeRole: true,
              },
              emit,
              nowIso,
            );
          default:
            return assertNever(decision, 'invitation decision');
        }
      }),

    declineInvitation: (input) =>
      write((_emit, nowIso) => {
        const row = st.invitation.get(input.threadId, input.principalId) as InvitationRow | undefined;
        if (row === undefined) return false;
        st.deleteInvitation.run(input.threadId, input.principalId);
        return isInvitationPending(toInvitationState(row), nowIso);
      }),
  };
}
