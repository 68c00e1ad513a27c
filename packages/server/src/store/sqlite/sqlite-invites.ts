import { assertNever } from '@bubble/protocol';
import { notFound } from '../../errors/bubble-error.js';
import { decideInviteAcceptance, isInviteOpen } from '../../domain/invite-rules.js';
import { hashesEqual } from '../../domain/tokens.js';
import type { BubbleStore } from '../store.js';
import type { SqliteStoreContext } from './sqlite-context.js';
import { toGrant, toInvite, toInviteState, type GrantRow, type InviteRow } from './sqlite-rows.js';

type InviteMethods = Pick<BubbleStore, 'createInvite' | 'listOpenInvites' | 'revokeInvite' | 'acceptInvite'>;

/** Invites: created by owners, stored as a hash of their token, accepted in one transaction with the grant they make. */
export function inviteMethods({ st, write, now, grantInJob }: SqliteStoreContext): InviteMethods {
  return {
    createInvite: (input) =>
      write((_emit, nowIso) => {
        if (!st.threadById.get(input.threadId)) throw notFound(`thread ${input.threadId} not found`);
        st.insertInvite.run(
          input.inviteId,
          input.threadId,
          input.role,
          input.createdBy,
          input.hash,
          nowIso,
          input.expiresAt,
          input.maxUses,
        );
        return toInvite(st.inviteById.get(input.inviteId) as InviteRow);
      }),

    listOpenInvites: async (threadId) => {
      const nowIso = now().toISOString();
      return (st.invitesOnThread.all(threadId) as InviteRow[])
        .filter((row) => isInviteOpen(toInviteState(row), nowIso))
        .map(toInvite);
    },

    revokeInvite: (threadId, inviteId) =>
      write((_emit, nowIso) => st.revokeInvite.run(nowIso, threadId, inviteId).changes === 1),

    acceptInvite: (input) =>
      write((emit, nowIso) => {
        const row = st.inviteByHash.get(input.hash) as InviteRow | undefined;
        if (row === undefined || row.hash === undefined || !hashesEqual(row.hash, input.hash))
          throw notFound('invite not found');
        const existing = st.liveGrant.get(row.thread_id, input.principalId) as GrantRow | undefined;
        const decision = decideInviteAcceptance(toInviteState(row), existing?.role ?? null, nowIso);
        switch (decision.kind) {
          case 'refuse':
            throw notFound(decision.message, { inviteId: row.invite_id });
          case 'already_joined':
            return { grant: toGrant(existing!), change: 'unchanged' as const };
          case 'grant': {
            const result = grantInJob(
              {
                threadId: row.thread_id,
                principalId: input.principalId,
                role: decision.role,
                by: row.created_by,
                mayChangeRole: true,
              },
              emit,
              nowIso,
            );
            st.useInvite.run(row.invite_id);
            return result;
          }
          default:
            return assertNever(decision, 'invite decision');
        }
      }),
  };
}
