import { SYSTEM_PRINCIPAL_ID } from '@bubble/protocol';
import { conflict, notFound } from '../../errors/bubble-error.js';
import type { LiveBusMessage } from '../../live/live-bus.js';
import type { BubbleStore } from '../store.js';
import { toPrincipal, toToken, type PrincipalRow, type TokenRow } from '../sqlite/sqlite-rows.js';
import { poolRead, principalById, txRead, type PostgresStoreContext } from './postgres-context.js';
import { SQL } from './postgres-sql.js';
import type { WriteTx } from './postgres-write-tx.js';

type PeopleMethods = Pick<
  BubbleStore,
  | 'createPrincipal'
  | 'getPrincipal'
  | 'updatePrincipal'
  | 'searchVisiblePrincipals'
  | 'isPrincipalVisible'
  | 'addToken'
  | 'listTokens'
  | 'findLiveTokenByHash'
  | 'revokeTokens'
  | 'revokeAllCredentials'
  | 'listPrincipals'
  | 'tokenRevocationCursor'
  | 'readTokenRevocationsAfter'
  | 'findOidcSubject'
  | 'resolveOidcSubject'
>;

/** Revokes those of `ids` (all live ones when omitted) that are live tokens of the principal, logging each. */
async function revokeTokensJob(tx: WriteTx, principalId: string, ids?: readonly string[]): Promise<string[]> {
  const { rows } =
    ids === undefined
      ? await tx.write<{ token_id: string }>(SQL.revokeAllTokens, [tx.nowIso, principalId])
      : await tx.write<{ token_id: string }>(SQL.revokeTokens, [tx.nowIso, principalId, ids]);
  const revoked = rows.map((r) => r.token_id);
  for (const id of revoked) tx.logRevocation(principalId, id);
  if (revoked.length > 0) tx.emit({ kind: 'tokens_revoked', principalId, tokenIds: revoked });
  return revoked;
}

/** Every live token of the principal, and the JWTs of its identity-provider subject (if any) issued before now. */
async function revokeAllJob(tx: WriteTx, principalId: string) {
  const revokedTokenIds = await revokeTokensJob(tx, principalId);
  if ((await tx.write(SQL.setJwtsNotBefore, [tx.nowIso, principalId])).rowCount === 0) {
    return { revokedTokenIds, jwtsIssuedBefore: null };
  }
  tx.logRevocation(principalId, null);
  const message: LiveBusMessage = { kind: 'jwts_revoked', principalId, issuedBefore: tx.nowIso };
  tx.emit(message);
  return { revokedTokenIds, jwtsIssuedBefore: tx.nowIso };
}

/** Principals, their tokens, the token revocation log, and the mapping of OIDC subjects to principals. */
export function peopleMethods({ db, write }: PostgresStoreContext): PeopleMethods {
  const read = poolRead(db);
  return {
    createPrincipal: (input, token) =>
      write({
        run: async (tx) => {
          if ((await tx.read(SQL.principalIdsTaken, [[input.principalId]])).length > 0)
            throw conflict(`principal ${input.principalId} already exists`);
          await tx.write(SQL.insertPrincipal, [
            input.principalId,
            input.kind,
            input.displayName,
            input.kind === 'bot' ? (input.joinableBy ?? 'owners') : null,
            tx.nowIso,
          ]);
          if (input.ownerPrincipalIds.length > 0)
            await tx.write(SQL.insertOwners, [input.principalId, input.ownerPrincipalIds]);
          if (token) await tx.write(SQL.insertToken, [token.tokenId, token.principalId, token.hash, tx.nowIso]);
          return (await principalById(txRead(tx), input.principalId))!;
        },
      }),
    getPrincipal: (principalId) => principalById(read, principalId),
    updatePrincipal: (principalId, patch) =>
      write({
        run: async (tx) => {
          // Refused before writing, so the refusal leaves the rest of its group alone.
          if ((await tx.read(SQL.principalIdsTaken, [[principalId]])).length === 0)
            throw notFound(`principal ${principalId} not found`);
          await tx.write(SQL.updatePrincipal, [principalId, patch.displayName ?? null, patch.joinableBy ?? null]);
          const principal = (await principalById(txRead(tx), principalId))!;
          tx.emit({ kind: 'principal_updated', principal });
          return principal;
        },
      }),
    searchVisiblePrincipals: async (viewer, query, limit) =>
      (await db.query<PrincipalRow>(SQL.searchVisible, [viewer, query.toLowerCase(), limit])).map(toPrincipal),
    isPrincipalVisible: async (viewer, target) => (await db.query(SQL.isVisible, [viewer, target])).length > 0,

    addToken: (token) =>
      write({
        run: async (tx) =>
          toToken(
            (await tx.write<TokenRow>(SQL.insertToken, [token.tokenId, token.principalId, token.hash, tx.nowIso]))
              .rows[0]!,
          ),
      }),
    listTokens: async (principalId) => (await db.query<TokenRow>(SQL.tokensOf, [principalId])).map(toToken),
    findLiveTokenByHash: async (hash) => {
      const [row] = await db.query<TokenRow>(SQL.liveTokenByHash, [hash]);
      return row ? toToken(row) : null;
    },
    revokeTokens: (principalId, tokenId) =>
      write({
        run: async (tx) =>
          tokenId === undefined
            ? (await revokeAllJob(tx, principalId)).revokedTokenIds
            : revokeTokensJob(tx, principalId, [tokenId]),
      }),
    revokeAllCredentials: (principalId) => write({ run: (tx) => revokeAllJob(tx, principalId) }),

    listPrincipals: async () => (await db.query<PrincipalRow>(SQL.allPrincipals)).map(toPrincipal),
    tokenRevocationCursor: async () => (await db.query<{ seq: number }>(SQL.revocationCursor))[0]!.seq,
    readTokenRevocationsAfter: async (cursor, limit) =>
      (
        await db.query<{ seq: number; token_id: string | null; principal_id: string; revoked_at: string }>(
          SQL.revocationsAfter,
          [cursor, limit],
        )
      ).map((r) => ({ cursor: r.seq, tokenId: r.token_id, principalId: r.principal_id, revokedAt: r.revoked_at })),

    findOidcSubject: async (issuer, subject) => {
      const [row] = await db.query<PrincipalRow & { name_claim: string | null; jwts_not_before: string | null }>(
        SQL.oidcSubject,
        [issuer, subject],
      );
      if (row === undefined) return null;
      return { principal: toPrincipal(row), nameClaim: row.name_claim, jwtsNotBefore: row.jwts_not_before };
    },

    // Two instances signing the same subject in at once both insert: the loser's unique violation
    // fails its group, whose jobs run again one by one, and the lone rerun finds the subject.
    resolveOidcSubject: (input) =>
      write({
        run: async (tx) => {
          const [row] = await tx.read<{ principal_id: string; name_claim: string | null }>(SQL.oidcSubjectRow, [
            input.issuer,
            input.subject,
          ]);
          if (row !== undefined) {
            if (input.nameClaim !== null && input.nameClaim !== row.name_claim) {
              await tx.write(SQL.setOidcNameClaim, [input.issuer, input.subject, input.nameClaim]);
              await tx.write(SQL.setDisplayName, [row.principal_id, input.nameClaim]);
              const principal = (await principalById(txRead(tx), row.principal_id))!;
              tx.emit({ kind: 'principal_updated', principal });
              return { principal, created: false };
            }
            return { principal: (await principalById(txRead(tx), row.principal_id))!, created: false };
          }
          const taken = new Set(
            (await tx.read<{ principal_id: string }>(SQL.principalIdsTaken, [input.idCandidates])).map(
              (r) => r.principal_id,
            ),
          );
          const principalId = input.idCandidates.find((id) => id !== SYSTEM_PRINCIPAL_ID && !taken.has(id));
          if (principalId === undefined) throw conflict('every principal id derived from this sign-in is taken');
          await tx.write(SQL.insertPrincipal, [principalId, 'human', input.nameClaim, null, tx.nowIso]);
          await tx.write(SQL.insertOidcSubject, [input.issuer, input.subject, principalId, input.nameClaim, tx.nowIso]);
          return { principal: (await principalById(txRead(tx), principalId))!, created: true };
        },
      }),
  };
}
