import { assertNever } from '@bubble/protocol';
import { notFound } from '../../errors/bubble-error.js';
import {
  decideInvitationAcceptance,
  invitationExpiresAt,
  isInvitationPending,
  keepsPendingInvitation,
} from '../../domain/invitation-rules.js';
import type { BubbleStore } from '../store.js';
import { toGrant, toInvitation, toInvitationState, type GrantRow, type InvitationRow } from '../sqlite/sqlite-rows.js';
import { grantInJob, type PostgresStoreContext } from './postgres-context.js';
import { SQL } from './postgres-sql.js';

type InvitationMethods = Pick<
  BubbleStore,
  'inviteToThread' | 'listPendingInvitations' | 'acceptInvitation' | 'declineInvitation'
>;

interface InvitationFacts {
  kind: 'human' | 'bot';
  thread_exists: boolean;
  granted: boolean;
}

/** Pending invitations, as on SQLite. Accepting one locks its thread, as every grant does. */
export function invitationMethods({ db, write, now }: PostgresStoreContext): InvitationMethods {
  return {
    inviteToThread: (input) =>
      write({
        run: async (tx) => {
          const [facts] = await tx.read<InvitationFacts>(SQL.invitationFacts, [input.principalId, input.threadId]);
          if (facts?.kind !== 'human') return;
          if (!facts.thread_exists) throw notFound(`thread ${input.threadId} not found`);
          if (facts.granted) return;
          const [existing] = await tx.read<InvitationRow>(SQL.invitation, [input.threadId, input.principalId]);
          if (keepsPendingInvitation(existing && toInvitationState(existing), input.invitedBy, tx.nowIso)) return;
          await tx.write(SQL.deleteInvitation, [input.threadId, input.principalId]);
          await tx.write(SQL.insertInvitation, [
            input.threadId,
            input.principalId,
            input.role,
            input.invitedBy,
            tx.nowIso,
            invitationExpiresAt(tx.nowIso),
          ]);
          await tx.write(SQL.dropExpiredInvitations, [input.principalId, tx.nowIso]);
          await tx.write(SQL.dropOldestInvitations, [input.principalId, input.maxPending]);
        },
      }),

    listPendingInvitations: async (principalId) => {
      const nowIso = now().toISOString();
      return (await db.query<InvitationRow>(SQL.invitationsOf, [principalId]))
        .filter((row) => isInvitationPending(toInvitationState(row), nowIso))
        .map(toInvitation);
    },

    acceptInvitation: (input) =>
      write({
        threads: [input.threadId],
        run: async (tx) => {
          const [row] = await tx.read<InvitationRow>(SQL.invitation, [input.threadId, input.principalId]);
          if (row === undefined) throw notFound(`no pending invitation to thread ${input.threadId}`);
          const decision = decideInvitationAcceptance(toInvitationState(row), tx.nowIso);
          switch (decision.kind) {
            case 'refuse':
              throw notFound(`no pending invitation to thread ${input.threadId}`);
            case 'already_joined': {
              await tx.write(SQL.deleteInvitation, [input.threadId, input.principalId]);
              const [existing] = await tx.read<GrantRow>(SQL.liveGrant, [input.threadId, input.principalId]);
              return { grant: toGrant(existing!), change: 'unchanged' as const };
            }
            case 'grant':
              await tx.write(SQL.deleteInvitation, [input.threadId, input.principalId]);
              return grantInJob(tx, {
                threadId: input.threadId,
                principalId: input.principalId,
                role: decision.role,
                by: row.invited_by,
                mayChangeRole: true,
              });
            default:
              return assertNever(decision, 'invitation decision');
          }
        },
      }),

    declineInvitation: (input) =>
      write({
        run: async (tx) => {
          const [row] = await tx.read<InvitationRow>(SQL.invitation, [input.threadId, input.principalId]);
          if (row === undefined) return false;
          await tx.write(SQL.deleteInvitation, [input.threadId, input.principalId]);
          return isInvitationPending(toInvitationState(row), tx.nowIso);
        },
      }),
  };
}
