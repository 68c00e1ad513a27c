import type { Grant } from '@bubble/protocol';

/** One change of the caller's grants, as the grants stream reports it. */
export interface GrantUpdate {
  readonly change: 'added' | 'revoked';
  readonly grant: Grant;
}

/** Whether two grants of the same thread are the same grant (a re-grant or a role change is not). */
export function sameGrant(a: Grant, b: Grant): boolean {
  return (
    a.threadId === b.threadId &&
    a.principalId === b.principalId &&
    a.role === b.role &&
    a.joinedSeq === b.joinedSeq &&
    a.grantedAt === b.grantedAt
  );
}

/**
 * The real changes between the grants a stream has reported and a fresh snapshot from the server
 * (after a reconnect): grants missing from the snapshot are revoked, new ones are added, and a
 * grant that changed while the stream was away (revoked and granted again, or given another role)
 * is reported as the old one revoked and the new one added. Equal grants produce nothing.
 * Revocations come first, then additions, each in thread id order, so the result is deterministic.
 */
export function diffGrants(reported: ReadonlyMap<string, Grant>, snapshot: ReadonlyMap<string, Grant>): GrantUpdate[] {
  const revoked: GrantUpdate[] = [];
  const added: GrantUpdate[] = [];
  for (const threadId of [...reported.keys()].sort()) {
    const before = reported.get(threadId) as Grant;
    const now = snapshot.get(threadId);
    if (now === undefined) revoked.push({ change: 'revoked', grant: before });
    else if (!sameGrant(before, now)) {
      revoked.push({ change: 'revoked', grant: before });
      added.push({ change: 'added', grant: now });
    }
  }
  for (const threadId of [...snapshot.keys()].sort()) {
    if (!reported.has(threadId)) added.push({ change: 'added', grant: snapshot.get(threadId) as Grant });
  }
  added.sort((a, b) => (a.grant.threadId < b.grant.threadId ? -1 : a.grant.threadId > b.grant.threadId ? 1 : 0));
  return [...revoked, ...added];
}
