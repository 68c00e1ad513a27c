import {
  INVITE_TOKEN_PREFIX,
  type CreateInviteRequest,
  type Grant,
  type Invite,
  type InviteInfo,
  type Principal,
} from '@bubble/protocol';
import { randomBytes } from 'node:crypto';
import { forbidden, notFound } from '../errors/bubble-error.js';
import { requireOwner } from '../domain/access-rules.js';
import { hashToken } from '../domain/tokens.js';
import type { BubbleStore } from '../store/store.js';

/** Whether the text has the shape of an invite token: the prefix and at least 32 random bytes in base64url. */
export const looksLikeInviteToken = (text: string): boolean =>
  new RegExp(`^${INVITE_TOKEN_PREFIX}[A-Za-z0-9_-]{43,}$`).test(text);

/**
 * Invites (protocol.md, Threads and grants): how a person is brought into a thread without
 * knowing their id. Owners create, list and revoke them; a person accepts one with its token.
 */
export function createInviteService(store: BubbleStore, now: () => Date = () => new Date()) {
  return {
    /** 201 with the plaintext token, once; only its SHA-256 is stored. */
    async create(caller: Principal, threadId: string, input: CreateInviteRequest): Promise<Invite> {
      requireOwner(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      const token = `${INVITE_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
      const invite = await store.createInvite({
        inviteId: `inv_${randomBytes(12).toString('base64url')}`,
        threadId,
        role: input.role,
        createdBy: caller.principalId,
        hash: hashToken(token),
        expiresAt: new Date(now().getTime() + input.expiresInSeconds * 1000).toISOString(),
        maxUses: input.maxUses,
      });
      return { ...invite, token };
    },

    async list(caller: Principal, threadId: string): Promise<InviteInfo[]> {
      requireOwner(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      return store.listOpenInvites(threadId);
    },

    async revoke(caller: Principal, threadId: string, inviteId: string): Promise<void> {
      requireOwner(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      if (!(await store.revokeInvite(threadId, inviteId)))
        throw notFound(`invite ${inviteId} of thread ${threadId} not found`);
    },

    /** Joins a person to the invite's thread; 404 for a token that is not a live invite's (see `domain/invite-rules.ts`). */
    async accept(caller: Principal, token: string): Promise<Grant> {
      if (caller.kind !== 'human')
        throw forbidden('invites are for people: a bot is added to a thread by a participant');
      if (!looksLikeInviteToken(token)) throw notFound('invite not found');
      return (await store.acceptInvite({ hash: hashToken(token), principalId: caller.principalId })).grant;
    },
  };
}

export type InviteService = ReturnType<typeof createInviteService>;
