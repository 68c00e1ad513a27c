import { describe, expect, it } from 'vitest';
import type { Grant } from '@bubble/protocol';
import { GrantView } from './grant-view.js';

const grant = (threadId: string, grantedAt: string, role: Grant['role'] = 'member'): Grant => ({
  threadId,
  principalId: 'alice',
  role,
  grantedBy: 'bob',
  grantedAt,
  joinedSeq: 1,
  revokedAt: null,
});

const T1 = '2026-11-29T10:00:00.001Z';
const T2 = '2026-11-29T10:00:00.002Z';
const T3 = '2026-11-29T10:00:00.003Z';

describe('GrantView', () => {
  it('drops an added change the snapshot already holds', () => {
    const view = new GrantView();
    view.seed(grant('th_a', T1));
    expect(view.accept('added', grant('th_a', T1))).toBe(false);
  });

  it('passes a role change of a known grant', () => {
    const view = new GrantView();
    view.seed(grant('th_a', T1));
    expect(view.accept('added', grant('th_a', T1, 'owner'))).toBe(true);
    expect(view.accept('added', grant('th_a', T1, 'owner'))).toBe(false);
  });

  it('drops changes older than the snapshot (added, revoked, re-added before the read)', () => {
    const view = new GrantView();
    view.seed(grant('th_a', T3));
    expect(view.accept('added', grant('th_a', T1))).toBe(false);
    expect(view.accept('revoked', grant('th_a', T1))).toBe(false);
    expect(view.accept('added', grant('th_a', T3))).toBe(false);
    expect(view.accept('revoked', grant('th_a', T3))).toBe(true);
  });

  it('drops a revocation of a grant the client never saw', () => {
    const view = new GrantView();
    expect(view.accept('revoked', grant('th_a', T1))).toBe(false);
  });

  it('passes new grants and their revocation, once each', () => {
    const view = new GrantView();
    expect(view.accept('added', grant('th_b', T2))).toBe(true);
    expect(view.accept('added', grant('th_b', T2))).toBe(false);
    expect(view.accept('revoked', grant('th_b', T2))).toBe(true);
    expect(view.accept('revoked', grant('th_b', T2))).toBe(false);
    expect(view.accept('added', grant('th_b', T3))).toBe(true);
  });

  it('drops a stale added after a newer revocation', () => {
    const view = new GrantView();
    view.seed(grant('th_a', T2));
    expect(view.accept('revoked', grant('th_a', T2))).toBe(true);
    expect(view.accept('added', grant('th_a', T1))).toBe(false);
  });
});
