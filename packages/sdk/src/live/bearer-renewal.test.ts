import { describe, expect, it } from 'vitest';
import type { Credentials } from '../client/credentials.js';
import { BearerRenewal } from './bearer-renewal.js';

const BACKOFF = { baseMs: 1_000, capMs: 60_000 };

function renewal(renew: Credentials['renew']) {
  return new BearerRenewal({ current: () => 'old', renew }, BACKOFF, () => 0.5);
}

describe('BearerRenewal', () => {
  it('is available once per refusal, only for credentials that renew and a bearer that went out', async () => {
    expect(new BearerRenewal({ current: () => 'x' }, BACKOFF, Math.random).available).toBe(false);
    const subject = renewal(async () => 'new');
    expect(subject.available).toBe(false);
    subject.sentBearer('old');
    expect(subject.available).toBe(true);
    expect(await subject.renew()).toEqual({ kind: 'renewed' });
    expect(subject.available).toBe(false);
    subject.ready();
    expect(subject.available).toBe(true);
    subject.forgo();
    expect(subject.available).toBe(false);
  });

  it.each<[string, Credentials['renew'], string]>([
    ['a newer bearer', async () => 'new', 'renewed'],
    ['null (signed out)', async () => null, 'final'],
    ['the refused bearer again (the provider is down)', async (rejected) => rejected, 'later'],
    ['a throw', async () => Promise.reject(new Error('unreachable')), 'later'],
  ])('answers %s with %s', async (_what, renew, kind) => {
    const subject = renewal(renew);
    subject.sentBearer('old');
    expect((await subject.renew()).kind).toBe(kind);
  });

  it('waits longer after each passing failure, and starts over once the server is ready', () => {
    const subject = renewal(async () => 'new');
    expect([subject.nextRetry(), subject.nextRetry(), subject.nextRetry()]).toEqual([
      { delayMs: 500, attempt: 1 },
      { delayMs: 1_000, attempt: 2 },
      { delayMs: 2_000, attempt: 3 },
    ]);
    subject.ready();
    expect(subject.nextRetry()).toEqual({ delayMs: 500, attempt: 1 });
  });
});
