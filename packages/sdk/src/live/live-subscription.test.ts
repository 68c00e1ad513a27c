import type { EventEnvelope, Grant } from '@bubble/protocol';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  GrantsSubscription,
  ThreadSubscription,
  type AnyLiveSubscription,
  type SubscriptionHost,
} from './live-subscription.js';

const logger = pino({ level: 'silent' });

class RecordingHost implements SubscriptionHost {
  released: AnyLiveSubscription[] = [];
  drains = 0;
  release(subscription: AnyLiveSubscription): void {
    this.released.push(subscription);
  }
  drained(): void {
    this.drains += 1;
  }
}

function event(seq: number, threadId = 'th_1'): EventEnvelope {
  return {
    id: `ev_${seq}`,
    threadId,
    seq,
    type: 'test.note',
    principalId: 'alice',
    data: {},
    clientEventId: null,
    createdAt: '2026-11-29T10:00:00Z',
  };
}

function grant(threadId: string, joinedSeq = 1): Grant {
  return {
    threadId,
    principalId: 'bot',
    role: 'member',
    grantedBy: 'alice',
    grantedAt: '2026-11-29T10:00:00Z',
    joinedSeq,
    revokedAt: null,
  };
}

describe('ThreadSubscription', () => {
  it('accepts the next seq, drops duplicates, reports gaps', () => {
    const subscription = new ThreadSubscription('t1', 'th_1', 3, new RecordingHost(), logger, 100, undefined);
    expect([4, 4, 3, 5, 7].map((seq) => subscription.accept(event(seq)))).toEqual([
      'ok',
      'duplicate',
      'duplicate',
      'ok',
      'gap',
    ]);
    expect(subscription.accept(event(6, 'th_other'))).toBe('duplicate');
  });

  it('tracks the last delivered seq, and re-subscribes after it, dropping what was only buffered', async () => {
    const subscription = new ThreadSubscription('t1', 'th_1', 0, new RecordingHost(), logger, 100, undefined);
    for (const seq of [1, 2, 3]) subscription.accept(event(seq));
    expect((await subscription.next()).value?.seq).toBe(1);
    expect(subscription.lastDeliveredSeq).toBe(1);
    expect(subscription.subscribeFrame('s9')).toEqual({ type: 'subscribe', id: 's9', threadId: 'th_1', afterSeq: 1 });
    // The server sends 2 and 3 again after the re-subscribe: each is delivered once.
    for (const seq of [2, 3]) expect(subscription.accept(event(seq))).toBe('ok');
    expect([(await subscription.next()).value?.seq, (await subscription.next()).value?.seq]).toEqual([2, 3]);
  });

  it('hands an item straight to a waiting consumer', async () => {
    const subscription = new ThreadSubscription('t1', 'th_1', 0, new RecordingHost(), logger, 100, undefined);
    const pending = subscription.next();
    subscription.accept(event(1));
    expect((await pending).value?.seq).toBe(1);
    expect(subscription.lastDeliveredSeq).toBe(1);
  });

  it('is full at its bound and drains below half of it', async () => {
    const host = new RecordingHost();
    const subscription = new ThreadSubscription('t1', 'th_1', 0, host, logger, 4, undefined);
    for (const seq of [1, 2, 3, 4]) subscription.accept(event(seq));
    expect(subscription.isFull).toBe(true);
    await subscription.next();
    expect(host.drains).toBe(0);
    await subscription.next();
    expect(host.drains).toBe(1);
  });

  it('delivers buffered events before ending with the server reason', async () => {
    const subscription = new ThreadSubscription('t1', 'th_1', 0, new RecordingHost(), logger, 100, undefined);
    subscription.accept(event(1));
    subscription.end({ kind: 'server', reason: 'grant_revoked' });
    expect((await subscription.next()).value?.seq).toBe(1);
    expect(await subscription.next()).toEqual({ value: undefined, done: true });
    expect(subscription.endReason).toEqual({ kind: 'server', reason: 'grant_revoked' });
  });

  it('rejects a pending next with a terminal error', async () => {
    const subscription = new ThreadSubscription('t1', 'th_1', 0, new RecordingHost(), logger, 100, undefined);
    const pending = subscription.next();
    subscription.fail(new Error('revoked'));
    await expect(pending).rejects.toThrow('revoked');
  });

  it('return() ends the iteration and releases the subscription', async () => {
    const host = new RecordingHost();
    const subscription = new ThreadSubscription('t1', 'th_1', 0, host, logger, 100, undefined);
    const pending = subscription.next();
    await subscription.return();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(host.released).toEqual([subscription]);
    expect(subscription.endReason).toEqual({ kind: 'unsubscribed' });
  });

  it('an aborted signal ends the iteration', async () => {
    const controller = new AbortController();
    const host = new RecordingHost();
    const subscription = new ThreadSubscription('t1', 'th_1', 0, host, logger, 100, controller.signal);
    const pending = subscription.next();
    controller.abort();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(subscription.endReason).toEqual({ kind: 'aborted' });
    expect(host.released).toHaveLength(1);
  });
});

describe('GrantsSubscription', () => {
  const summary = (items: Array<{ change: string; grant: Grant }>) =>
    items.map((u) => `${u.change} ${u.grant.threadId}`);

  async function drain(
    subscription: GrantsSubscription,
    count: number,
  ): Promise<Array<{ change: string; grant: Grant }>> {
    const items = [];
    for (let i = 0; i < count; i += 1)
      items.push((await subscription.next()).value as { change: string; grant: Grant });
    return items;
  }

  it('reports the first snapshot, live changes, and after a re-sync only the difference', async () => {
    const subscription = new GrantsSubscription('g1', new RecordingHost(), logger, 100, undefined);
    subscription.subscribeFrame('s1');
    subscription.accept('added', grant('a'));
    subscription.accept('added', grant('b'));
    const synced = subscription.whenSynced();
    subscription.acceptSynced();
    await synced;
    expect(summary(await drain(subscription, 2))).toEqual(['added a', 'added b']);

    subscription.accept('added', grant('c'));
    subscription.accept('added', grant('c')); // the same grant again: not a change
    subscription.accept('revoked', grant('zz')); // never reported: not a change
    expect(summary(await drain(subscription, 1))).toEqual(['added c']);

    // Reconnect: the fresh snapshot lacks b and has d.
    expect(subscription.subscribeFrame('s2')).toEqual({ type: 'subscribe_grants', id: 's2' });
    for (const threadId of ['a', 'c', 'd']) subscription.accept('added', grant(threadId));
    subscription.acceptSynced();
    expect(summary(await drain(subscription, 2))).toEqual(['revoked b', 'added d']);
    expect([...subscription.current().keys()].sort()).toEqual(['a', 'c', 'd']);
  });
});
