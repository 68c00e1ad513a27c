import {
  LIMITS,
  subthreadDepth,
  type Grant,
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
     * Grants `role` to a principal. Needs the caller's own grant; `owner` needs an owner.
     * A human may add any existing principal; a bot only principals it can see
     * (so a model cannot probe for ids). Unknown principals are 404.
     * A bot whose `joinableBy` is `owners` is added by one of its owners only: it acts,
     * and spends, on their behalf. Anyone else is refused with 403, or 404 when the bot
     * is not visible to them (exactly as an unknown id).
     */
    async addParticipant(caller: Principal, threadId: string, input: { principalId: string; role: Role }) {
      const access = await store.getThreadAccess(threadId, caller.principalId);
      if (input.role === 'owner') requireOwner(access, threadId, caller.principalId);
      const a = requireParticipant(access, threadId, caller.principalId);
      const target = await store.getPrincipal(input.principalId);
      const ownersOnly =
        target !== null &&
        target.kind === 'bot' &&
        target.joinableBy !== 'anyone' &&
        !target.ownerPrincipalIds.includes(caller.principalId);
      const visible =
        target !== null &&
        ((caller.kind === 'human' && !ownersOnly) ||
          (await store.isPrincipalVisible(caller.principalId, input.principalId)));
      if (!visible) throw notFound(`principal ${input.principalId} not found`);
      if (ownersOnly) throw forbidden(`only an owner of ${input.principalId} may add it to a thread`);
      return store.putGrant({
        threadId,
        principalId: input.principalId,
        role: input.role,
        by: caller.principalId,
        mayChangeRole: a.ownGrant?.role === 'owner',
      });
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
