import { assertNever } from '@bubble/protocol';
import { notFound } from '../../errors/bubble-error.js';
import { decideInviteAcceptance, isInviteOpen } from '../../domain/invite-rules.js';
import { hashesEqual } from '../../domain/tokens.js';
import type { BubbleStore } from '../store.js';
import { toGrant, toInvite, toInviteState, type GrantRow, type InviteRow } from '../sqlite/sqlite-rows.js';
import { grantInJob, type PostgresStoreContext } from './postgres-context.js';
import { SQL } from './postgres-sql.js';

type InviteMethods = Pick<BubbleStore, 'createInvite' | 'listOpenInvites' | 'revokeInvite' | 'acceptInvite'>;

/**
 * Invites, as on SQLite. Accepting one locks its thread (found from the hash before the group's
 * locks are taken), so uses are counted one acceptance at a time on every instance.
 */
export function inviteMethods({ db, write, now }: PostgresStoreContext): InviteMethods {
  return {
    createInvite: (input) =>
      write({
        run: async (tx) => {
          if ((await tx.read(SQL.threadExists, [input.threadId])).length === 0)
            throw notFound(`thread ${input.threadId} not found`);
          await tx.write(SQL.insertInvite, [
            input.inviteId,
            input.threadId,
            input.role,
            input.createdBy,
            input.hash,
            tx.nowIso,
            input.expiresAt,
            input.maxUses,
          ]);
          return toInvite((await tx.read<InviteRow>(SQL.inviteById, [input.inviteId]))[0]!);
        },
      }),

    listOpenInvites: async (threadId) => {
      const nowIso = now().toISOString();
      return (await db.query<InviteRow>(SQL.invitesOnThread, [threadId]))
        .filter((row) => isInviteOpen(toInviteState(row), nowIso))
        .map(toInvite);
    },

    revokeInvite: (threadId, inviteId) =>
      write({
        run: async (tx) => (await tx.write(SQL.revokeInvite, [tx.nowIso, threadId, inviteId])).rowCount === 1,
      }),

    acceptInvite: (input) =>
      write({
        findThreads: async (tx) =>
          (await tx.read<{ thread_id: string }>(SQL.inviteThreadByHash, [input.hash])).map((r) => r.thread_id),
        run: async (tx) => {
          const [row] = await tx.read<InviteRow>(SQL.inviteByHash, [input.hash]);
          if (row === undefined || row.hash === undefined || !hashesEqual(row.hash, input.hash))
            throw notFound('invite not found');
          const [existing] = await tx.read<GrantRow>(SQL.liveGrant, [row.thread_id, input.principalId]);
          const decision = decideInviteAcceptance(toInviteState(row), existing?.role ?? null, tx.nowIso);
          switch (decision.kind) {
            case 'refuse':
              throw notFound(decision.message, { inviteId: row.invite_id });
            case 'already_joined':
              return { grant: toGrant(existing!), change: 'unchanged' as const };
            case 'grant': {
              const result = await grantInJob(tx, {
                threadId: row.thread_id,
                principalId: input.principalId,
                role: decision.role,
                by: row.created_by,
                mayChangeRole: true,
              });
              await tx.write(SQL.useInvite, [row.invite_id]);
              return result;
            }
            default:
              return assertNever(decision, 'invite decision');
          }
        },
      }),
  };
}
