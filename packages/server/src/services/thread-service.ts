import {
  INVITATION_LIMITS,
  LIMITS,
  subthreadDepth,
  type Grant,
  type Invitation,
  type ParticipantGrant,
  type Principal,
  type Role,
  type Thread,
} from '@bubble/protocol';
import { BubbleError, forbidden, invalidRequest, notFound } from '../errors/bubble-error.js';
import { requireOwner, requireParticipant, requireReader } from '../domain/access-rules.js';
import { newSubthreadId, newThreadId } from '../domain/ids.js';
import type { BubbleStore } from '../store/store.js';

/**
 * `isOnline`: whether a principal holds an authenticated WebSocket (on any instance), for the
 * participants route's `online`; the server passes its presence registry.
 */
const requireHuman = (caller: Principal): void => {
  if (caller.kind !== 'human')
    throw forbidden('invitations are for people: a bot is put on a thread by a participant who can see it');
};

export function createThreadService(store: BubbleStore, isOnline: (principalId: string) => boolean = () => false) {
  return {
    /** 201 when created; with a known `key`, 200 with the earlier thread. */
    async create(
      caller: Principal,
      input: {
        title?: string | null | undefined;
        parentThreadId?: string | null | undefined;
        key?: string | undefined;
      },
    ): Promise<{ thread: Thread; created: boolean }> {
      const parent = input.parentThreadId ?? null;
      if (parent !== null) {
        requireParticipant(await store.getThreadAccess(parent, caller.principalId), parent, caller.principalId);
        if (subthreadDepth(parent) >= LIMITS.maxSubthreadDepth) {
          throw invalidRequest(
            `subthreads nest at most ${LIMITS.maxSubthreadDepth} levels deep; ${parent} is at the limit`,
            { maxDepth: LIMITS.maxSubthreadDepth },
          );
        }
      }
      for (let attempt = 0; ; attempt += 1) {
        try {
          return await store.createThread({
            threadId: parent === null ? newThreadId() : newSubthreadId(parent),
            parentThreadId: parent,
            title: input.title ?? null,
            createdBy: caller.principalId,
            key: input.key ?? null,
          });
        } catch (error) {
          // A random id collided with an existing one: draw again.
          if (!(error instanceof BubbleError && error.code === 'conflict') || attempt >= 3) throw error;
        }
      }
    },

    async get(caller: Principal, threadId: string): Promise<Thread> {
      return requireReader(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId)
        .thread;
    },

    list: (caller: Principal): Promise<Thread[]> => store.listThreadsWithLiveGrant(caller.principalId),

    /** The live grants, each with `online` as this instance knows it when the grants have been read. */
    async participants(caller: Principal, threadId: string): Promise<ParticipantGrant[]> {
      requireReader(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      const grants = await store.listLiveGrantsOnThread(threadId);
      return grants.map((grant) => ({ ...grant, online: isOnline(grant.principalId) }));
    },

    /**
     * Grants `role` to a principal the caller can see (see Visibility); the caller needs their own
     * grant, and `owner` needs an owner. A bot whose `joinableBy` is `owners` is added by one of its
     * owners only (it acts, and spends, on their behalf): anyone else who sees it is refused with 403.
     * Consent: anyone the caller cannot see, and any id that does not exist, is answered `pending`
     * after the same reads and the same write whatever the id is; only a human gets an invitation.
     */
    async addParticipant(
      caller: Principal,
      threadId: string,
      input: { principalId: string; role: Role },
    ): Promise<
      | { kind: 'granted'; grant: Grant; change: 'created' | 'role_changed' | 'unchanged' }
      | { kind: 'pending'; threadId: string; principalId: string }
    > {
      const access = await store.getThreadAccess(threadId, caller.principalId);
      if (input.role === 'owner') requireOwner(access, threadId, caller.principalId);
      const a = requireParticipant(access, threadId, caller.principalId);
      const target = await store.getPrincipal(input.principalId);
      const visible = await store.isPrincipalVisible(caller.principalId, input.principalId);
      if (target === null || !visible) {
        await store.inviteToThread({
          threadId,
          principalId: input.principalId,
          role: input.role,
          invitedBy: caller.principalId,
          maxPending: INVITATION_LIMITS.maxPendingPerPrincipal,
        });
        return { kind: 'pending', threadId, principalId: input.principalId };
      }
      if (
        target.kind === 'bot' &&
        target.joinableBy !== 'anyone' &&
        !target.ownerPrincipalIds.includes(caller.principalId)
      )
        throw forbidden(`only an owner of ${input.principalId} may add it to a thread`);
      const result = await store.putGrant({
        threadId,
        principalId: input.principalId,
        role: input.role,
        by: caller.principalId,
        mayChangeRole: a.ownGrant?.role === 'owner',
      });
      return { kind: 'granted', ...result };
    },

    /** A person's pending invitations (protocol.md, Consent); invitations are for people, so a bot is refused. */
    async invitations(caller: Principal): Promise<Invitation[]> {
      requireHuman(caller);
      return store.listPendingInvitations(caller.principalId);
    },

    async acceptInvitation(caller: Principal, threadId: string): Promise<Grant> {
      requireHuman(caller);
      return (await store.acceptInvitation({ threadId, principalId: caller.principalId })).grant;
    },

    /** Drops the invitation; the inviter is not told. */
    async declineInvitation(caller: Principal, threadId: string): Promise<void> {
      requireHuman(caller);
      if (!(await store.declineInvitation({ threadId, principalId: caller.principalId })))
        throw notFound(`no pending invitation to thread ${threadId}`);
    },

    /** An owner may remove anyone; anyone may remove themselves. */
    async removeParticipant(caller: Principal, threadId: string, principalId: string): Promise<void> {
      const access = await store.getThreadAccess(threadId, caller.principalId);
      if (principalId === caller.principalId) requireParticipant(access, threadId, caller.principalId);
      else requireOwner(access, threadId, caller.principalId);
      const revoked = await store.revokeGrant({ threadId, principalId, by: caller.principalId });
      if (revoked === null) throw notFound(`${principalId} holds no grant on thread ${threadId}`);
    },

    grants: (caller: Principal): Promise<Grant[]> => store.listLiveGrantsOfPrincipal(caller.principalId),
  };
}

export type ThreadService = ReturnType<typeof createThreadService>;
