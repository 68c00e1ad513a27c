import type { Grant } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { diffGrants } from './grants-diff.js';

function grant(threadId: string, overrides: Partial<Grant> = {}): Grant {
  return {
    threadId,
    principalId: 'bot',
    role: 'member',
    grantedBy: 'alice',
    grantedAt: '2026-11-29T10:00:00Z',
    joinedSeq: 2,
    revokedAt: null,
    ...overrides,
  };
}

function map(...grants: Grant[]): Map<string, Grant> {
  return new Map(grants.map((g) => [g.threadId, g]));
}

const summary = (updates: ReturnType<typeof diffGrants>) =>
  updates.map((u) => `${u.change} ${u.grant.threadId} ${u.grant.role}@${u.grant.joinedSeq}`);

describe('diffGrants', () => {
  it.each<[string, Map<string, Grant>, Map<string, Grant>, string[]]>([
    ['nothing to nothing', map(), map(), []],
    [
      'first snapshot: everything added, in thread order',
      map(),
      map(grant('b'), grant('a')),
      ['added a member@2', 'added b member@2'],
    ],
    ['unchanged snapshot: nothing', map(grant('a'), grant('b')), map(grant('b'), grant('a')), []],
    ['one revoked while away', map(grant('a'), grant('b')), map(grant('a')), ['revoked b member@2']],
    ['one added while away', map(grant('a')), map(grant('a'), grant('c')), ['added c member@2']],
    [
      'revoked and added',
      map(grant('a'), grant('b')),
      map(grant('b'), grant('c')),
      ['revoked a member@2', 'added c member@2'],
    ],
    ['everything revoked', map(grant('a'), grant('b')), map(), ['revoked a member@2', 'revoked b member@2']],
    [
      'revoked then granted again while away: the old grant is revoked, the new one added',
      map(grant('a', { joinedSeq: 2 })),
      map(grant('a', { joinedSeq: 9, grantedAt: '2026-11-29T11:00:00Z' })),
      ['revoked a member@2', 'added a member@9'],
    ],
    [
      'role changed while away',
      map(grant('a')),
      map(grant('a', { role: 'owner' })),
      ['revoked a member@2', 'added a owner@2'],
    ],
  ])('%s', (_label, reported, snapshot, expected) => {
    expect(summary(diffGrants(reported, snapshot))).toEqual(expected);
  });
});
