import { SYSTEM_PRINCIPAL_ID } from '@bubble/protocol';
import { conflict } from '../../errors/bubble-error.js';
import type { BubbleStore } from '../store.js';
import type { SqliteStoreContext } from './sqlite-context.js';
import { toPrincipal, type PrincipalRow } from './sqlite-rows.js';

type PeopleMethods = Pick<
  BubbleStore,
  'listPrincipals' | 'tokenRevocationCursor' | 'readTokenRevocationsAfter' | 'findOidcSubject' | 'resolveOidcSubject'
>;

interface OidcSubjectRow {
  principal_id: string;
  name_claim: string | null;
  jwts_not_before: string | null;
}

/** Principals as the operator lists them, the token revocation log, and the mapping of OIDC subjects to principals. */
export function peopleMethods({ st, write, getPrincipalSync }: SqliteStoreContext): PeopleMethods {
  return {
    listPrincipals: async () => (st.allPrincipals.all() as PrincipalRow[]).map(toPrincipal),
    tokenRevocationCursor: async () => (st.revocationCursor.get() as { seq: number }).seq,
    readTokenRevocationsAfter: async (cursor, limit) =>
      (
        st.revocationsAfter.all(cursor, limit) as Array<{
          seq: number;
          token_id: string | null;
          principal_id: string;
          revoked_at: string;
        }>
      ).map((r) => ({ cursor: r.seq, tokenId: r.token_id, principalId: r.principal_id, revokedAt: r.revoked_at })),

    findOidcSubject: async (issuer, subject) => {
      const row = st.oidcSubject.get(issuer, subject) as OidcSubjectRow | undefined;
      if (row === undefined) return null;
      const principal = getPrincipalSync(row.principal_id);
      return principal === null ? null : { principal, nameClaim: row.name_claim, jwtsNotBefore: row.jwts_not_before };
    },

    resolveOidcSubject: (input) =>
      write((emit, nowIso) => {
        const row = st.oidcSubject.get(input.issuer, input.subject) as OidcSubjectRow | undefined;
        if (row !== undefined) {
          if (input.nameClaim !== null && input.nameClaim !== row.name_claim) {
            st.setOidcNameClaim.run(input.nameClaim, input.issuer, input.subject);
            st.setDisplayName.run(input.nameClaim, row.principal_id);
            const principal = getPrincipalSync(row.principal_id)!;
            emit({ kind: 'principal_updated', principal });
            return { principal, created: false };
          }
          return { principal: getPrincipalSync(row.principal_id)!, created: false };
        }
        let principalId: string | undefined;
        for (const candidate of input.idCandidates) {
          if (candidate !== SYSTEM_PRINCIPAL_ID && !st.principalExists.get(candidate)) {
            principalId = candidate;
            break;
          }
        }
        if (principalId === undefined) throw conflict('every principal id derived from this sign-in is taken');
        st.insertPrincipal.run(principalId, 'human', input.nameClaim, null, nowIso);
        st.insertOidcSubject.run(input.issuer, input.subject, principalId, input.nameClaim, nowIso);
        return { principal: getPrincipalSync(principalId)!, created: true };
      }),
  };
}
