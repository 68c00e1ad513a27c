import type { Grant } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { messageKey, OwnMessages } from './own-messages.js';

const grant = (role: Grant['role'], grantedAt = '2026-12-01T10:00:00.000Z'): Grant => ({
  threadId: 'th_a',
  principalId: 'bob',
  role,
  grantedBy: 'alice',
  grantedAt,
  joinedSeq: 3,
  revokedAt: null,
});

describe('OwnMessages', () => {
  it('drops the outbox copy of an own message, matched by content whatever its key order, once', () => {
    const own = new OwnMessages();
    expect(own.local({ kind: 'tokens_revoked', principalId: 'bob', tokenIds: ['tok_1'] })).toBe(true);
    expect(own.outbox({ tokenIds: ['tok_1'], principalId: 'bob', kind: 'tokens_revoked' } as never)).toBe(false);
    expect(own.outbox({ kind: 'tokens_revoked', principalId: 'bob', tokenIds: ['tok_1'] })).toBe(true);
  });

  it('drops the local copy when the outbox copy came first (a read that answered before the commit did)', () => {
    const own = new OwnMessages();
    expect(own.outbox({ kind: 'grant', change: 'revoked', grant: grant('member') })).toBe(true);
    expect(own.local({ kind: 'grant', change: 'revoked', grant: grant('member') })).toBe(false);
    // Nothing is left pending: another instance's later change of the grant is news.
    expect(own.outbox({ kind: 'grant', change: 'added', grant: grant('owner', '2026-12-01T10:00:01.000Z') })).toBe(
      true,
    );
  });

  it("publishes another instance's messages", () => {
    const own = new OwnMessages();
    own.local({ kind: 'jwts_revoked', principalId: 'bob', issuedBefore: '2026-12-01T10:00:00.000Z' });
    expect(own.outbox({ kind: 'jwts_revoked', principalId: 'carol', issuedBefore: '2026-12-01T10:00:00.000Z' })).toBe(
      true,
    );
  });

  it('drops a foreign change of a grant read before the own change that followed it, then takes later ones', () => {
    const own = new OwnMessages();
    own.local({ kind: 'grant', change: 'added', grant: grant('member') });
    // Another instance made bob an owner just before this one made him a member again.
    expect(own.outbox({ kind: 'grant', change: 'added', grant: grant('owner') })).toBe(false);
    expect(own.outbox({ kind: 'grant', change: 'added', grant: grant('member') })).toBe(false);
    expect(own.outbox({ kind: 'grant', change: 'revoked', grant: grant('member') })).toBe(true);
  });

  it('publishes a foreign change of the same grant made at another time: grants streams order those themselves', () => {
    const own = new OwnMessages();
    own.local({ kind: 'grant', change: 'added', grant: grant('owner', '2026-12-01T10:00:05.000Z') });
    expect(own.outbox({ kind: 'grant', change: 'revoked', grant: grant('member') })).toBe(true);
  });

  it('forgets a copy whose twin never came after two minutes', () => {
    let now = 0;
    const own = new OwnMessages(() => now);
    own.local({ kind: 'grant', change: 'added', grant: grant('member') });
    now = 121_000;
    expect(own.outbox({ kind: 'grant', change: 'revoked', grant: grant('member') })).toBe(true);
    expect(own.outbox({ kind: 'grant', change: 'added', grant: grant('member') })).toBe(true);
  });

  it('keys sort nested objects and keep arrays in order', () => {
    expect(messageKey({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
  });
});
