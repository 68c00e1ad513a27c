import { forbidden, notFound } from '../errors/bubble-error.js';
import type { ThreadAccess } from '../store/store.js';

/**
 * Who may do what on a thread. An unknown thread is 404; a known thread the
 * caller may not use is 403 (the protocol's "no grant" case).
 * A reader holds a live grant on the thread or on one of its ancestors; a
 * participant holds its own live grant; an owner's own grant has role owner.
 */
export const isReader = (access: ThreadAccess): boolean => access.ownGrant !== null || access.ancestorGrant;

/** Read access as one answer, for callers that report it rather than throw: no such thread, no access, or readable. */
export type ReadAccess = 'read' | 'forbidden' | 'not_found';
export const readAccessOf = (access: ThreadAccess | null): ReadAccess =>
  access === null ? 'not_found' : isReader(access) ? 'read' : 'forbidden';

export function requireReader(access: ThreadAccess | null, threadId: string, principalId: string): ThreadAccess {
  if (access === null) throw notFound(`thread ${threadId} not found`);
  if (!isReader(access)) throw forbidden(`${principalId} may not read thread ${threadId}`);
  return access;
}

export function requireParticipant(access: ThreadAccess | null, threadId: string, principalId: string): ThreadAccess {
  if (access === null) throw notFound(`thread ${threadId} not found`);
  if (access.ownGrant === null) throw forbidden(`${principalId} is not a participant of thread ${threadId}`);
  return access;
}

export function requireOwner(access: ThreadAccess | null, threadId: string, principalId: string): ThreadAccess {
  const a = requireParticipant(access, threadId, principalId);
  if (a.ownGrant?.role !== 'owner') throw forbidden(`${principalId} is not an owner of thread ${threadId}`);
  return a;
}
