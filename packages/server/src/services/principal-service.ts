import { SYSTEM_PRINCIPAL_ID, type Principal, type Token, type TokenInfo, type UpdatePrincipalRequest } from '@bubble/protocol';
import { conflict, forbidden, invalidRequest, notFound } from '../errors/bubble-error.js';
import { newTokenId } from '../domain/ids.js';
import { hashToken, mintTokenSecret } from '../domain/tokens.js';
import type { BubbleStore } from '../store/store.js';

/** Creates a human principal with its first token (the operator CLI's `principal create-human`). */
export async function createHumanPrincipal(
  store: BubbleStore,
  principalId: string,
  displayName: string | null,
): Promise<{ principal: Principal; token: Token }> {
  return createWithToken(store, { principalId, kind: 'human', displayName, ownerPrincipalIds: [] });
}

async function createWithToken(
  store: BubbleStore,
  input: { principalId: string; kind: 'human' | 'bot'; displayName: string | null; ownerPrincipalIds: string[] },
): Promise<{ principal: Principal; token: Token }> {
  if (input.principalId === SYSTEM_PRINCIPAL_ID) throw conflict(`principal id ${SYSTEM_PRINCIPAL_ID} is reserved`);
  const secret = mintTokenSecret(input.kind);
  const tokenId = newTokenId();
  const principal = await store.createPrincipal(input, { tokenId, principalId: input.principalId, hash: hashToken(secret) });
  return { principal, token: { tokenId, token: secret, createdAt: principal.createdAt } };
}

export function createPrincipalService(store: BubbleStore) {
  /** 404 for a principal the caller cannot see (exactly as for an unknown one), 403 for a visible one it does not own. */
  const requireVisible = async (caller: Principal, principalId: string): Promise<Principal> => {
    const target = await store.getPrincipal(principalId);
    if (target === null || !(await store.isPrincipalVisible(caller.principalId, principalId))) {
      throw notFound(`principal ${principalId} not found`);
    }
    return target;
  };
  const requireOwnerOf = async (caller: Principal, principalId: string): Promise<Principal> => {
    const target = await requireVisible(caller, principalId);
    if (!target.ownerPrincipalIds.includes(caller.principalId)) {
      throw forbidden(`${caller.principalId} is not an owner of ${principalId}`);
    }
    return target;
  };

  return {
    async createBot(caller: Principal, input: { principalId: string; displayName?: string | undefined }) {
      if (caller.kind !== 'human') throw forbidden('only a human principal can create bots');
      return createWithToken(store, {
        principalId: input.principalId,
        kind: 'bot',
        displayName: input.displayName ?? null,
        ownerPrincipalIds: [caller.principalId],
      });
    },

    search: (caller: Principal, query: string, limit: number) => store.searchVisiblePrincipals(caller.principalId, query, limit),

    get: requireVisible,

    /**
     * `PATCH /v1/principals/:id`: an owner changes either field; a principal may
     * rename itself but never widen who may add it (a bot must not open itself up).
     */
    async update(caller: Principal, principalId: string, patch: UpdatePrincipalRequest): Promise<Principal> {
      const target = await requireVisible(caller, principalId);
      const isOwner = target.ownerPrincipalIds.includes(caller.principalId);
      if (patch.joinableBy !== undefined) {
        if (target.kind !== 'bot') throw invalidRequest('joinableBy applies to bots only', { field: 'joinableBy' });
        if (!isOwner) throw forbidden(`only an owner of ${principalId} may change who may add it to threads`);
      }
      if (patch.displayName !== undefined && !isOwner && caller.principalId !== principalId) {
        throw forbidden(`only ${principalId} itself or one of its owners may rename it`);
      }
      return store.updatePrincipal(principalId, { displayName: patch.displayName, joinableBy: patch.joinableBy });
    },

    async mintToken(caller: Principal, principalId: string): Promise<Token> {
      const target = await requireOwnerOf(caller, principalId);
      const secret = mintTokenSecret(target.kind);
      const record = await store.addToken({ tokenId: newTokenId(), principalId, hash: hashToken(secret) });
      return { tokenId: record.tokenId, token: secret, createdAt: record.createdAt };
    },

    async listTokens(caller: Principal, principalId: string): Promise<TokenInfo[]> {
      await requireOwnerOf(caller, principalId);
      return (await store.listTokens(principalId)).map((t) => ({ tokenId: t.tokenId, createdAt: t.createdAt }));
    },

    async revokeToken(caller: Principal, principalId: string, tokenId: string): Promise<void> {
      await requireOwnerOf(caller, principalId);
      const revoked = await store.revokeTokens(principalId, tokenId);
      if (revoked.length === 0) throw notFound(`token ${tokenId} of ${principalId} not found`);
    },

    async revokeAllTokens(caller: Principal, principalId: string): Promise<void> {
      await requireOwnerOf(caller, principalId);
      await store.revokeTokens(principalId);
    },
  };
}

export type PrincipalService = ReturnType<typeof createPrincipalService>;
