import {
  SYSTEM_PRINCIPAL_ID,
  type OwnTokenInfo,
  type Principal,
  type Token,
  type TokenInfo,
  type UpdatePrincipalRequest,
} from '@bubble/protocol';
import { lookalikeOf } from '../domain/display-names.js';
import type { Authenticated } from './auth-service.js';
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
  const principal = await store.createPrincipal(input, {
    tokenId,
    principalId: input.principalId,
    hash: hashToken(secret),
  });
  return { principal, token: { tokenId, token: secret, createdAt: principal.createdAt } };
}

/** Enough to list anyone's visibility for the lookalike check; a team server's circles are far smaller. */
const MAX_VISIBLE_FOR_NAMES = 100_000;

export function createPrincipalService(store: BubbleStore) {
  /**
   * Who is who (protocol.md leaves the rule to the server): a bot may not be named like anyone
   * that the one naming it, or the bot itself, can see, by displayName or id (compared by
   * `nameKey`: case, surrounding whitespace and Unicode compatibility forms ignored). 409 names who.
   */
  const requireNotLookalike = async (
    displayName: string,
    botId: string,
    caller: Principal,
    alsoAsBot: boolean,
  ): Promise<void> => {
    const seen = await store.searchVisiblePrincipals(caller.principalId, '', MAX_VISIBLE_FOR_NAMES);
    const twin = lookalikeOf(displayName, seen, botId);
    if (twin !== null) {
      const who =
        twin.displayName === twin.principalId ? twin.principalId : `${twin.principalId} (${twin.displayName})`;
      throw conflict(
        `a bot may not be named like someone else: "${displayName}" is the name of ${who}; choose another display name`,
        {
          field: 'displayName',
          principalId: twin.principalId,
        },
      );
    }
    if (!alsoAsBot || botId === caller.principalId) return;
    // Someone only the bot sees (a thread its owner has left) is not named: the caller may not know they exist.
    if (
      lookalikeOf(displayName, await store.searchVisiblePrincipals(botId, '', MAX_VISIBLE_FOR_NAMES), botId) !== null
    ) {
      throw conflict(
        `a bot may not be named like someone else: "${displayName}" is the name of someone ${botId} works with; choose another display name`,
        {
          field: 'displayName',
        },
      );
    }
  };

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
      await requireNotLookalike(input.displayName ?? input.principalId, input.principalId, caller, false);
      return createWithToken(store, {
        principalId: input.principalId,
        kind: 'bot',
        displayName: input.displayName ?? null,
        ownerPrincipalIds: [caller.principalId],
      });
    },

    search: (caller: Principal, query: string, limit: number) =>
      store.searchVisiblePrincipals(caller.principalId, query, limit),

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
      if (patch.displayName !== undefined && target.kind === 'bot') {
        await requireNotLookalike(patch.displayName, principalId, caller, true);
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

    /** `DELETE /v1/principals/:id/tokens`: every credential (a bot's owners call it; no JWT maps to a bot, so that part ends nothing). */
    async revokeAllTokens(caller: Principal, principalId: string): Promise<void> {
      await requireOwnerOf(caller, principalId);
      await store.revokeAllCredentials(principalId);
    },

    /**
     * `GET /v1/auth/tokens`: the caller's own live local tokens; the one the request came with
     * has `current: true`. A caller signed in with a JWT uses none of them, so none is current.
     */
    async listOwnTokens(auth: Authenticated): Promise<OwnTokenInfo[]> {
      return (await store.listTokens(auth.principal.principalId)).map((t) => ({
        tokenId: t.tokenId,
        createdAt: t.createdAt,
        ...(t.tokenId === auth.tokenId ? { current: true } : {}),
      }));
    },

    /** `POST /v1/auth/tokens`: a person mints another token of their own (a bot's tokens are its owners' to mint). */
    async mintOwnToken(caller: Principal): Promise<Token> {
      if (caller.kind !== 'human')
        throw forbidden("a bot's tokens are minted by its owners (POST /v1/principals/:id/tokens)");
      const secret = mintTokenSecret('human');
      const record = await store.addToken({
        tokenId: newTokenId(),
        principalId: caller.principalId,
        hash: hashToken(secret),
      });
      return { tokenId: record.tokenId, token: secret, createdAt: record.createdAt };
    },

    /** `DELETE /v1/auth/tokens/:tokenId`: 404 unless it is a live token of the caller's. Its sockets close with 4003. */
    async revokeOwnToken(caller: Principal, tokenId: string): Promise<void> {
      const revoked = await store.revokeTokens(caller.principalId, tokenId);
      if (revoked.length === 0) throw notFound(`you have no live token ${tokenId}`);
    },
  };
}

export type PrincipalService = ReturnType<typeof createPrincipalService>;
