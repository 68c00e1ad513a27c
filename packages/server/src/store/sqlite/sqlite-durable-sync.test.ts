import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LiveBusMessage } from '../../live/live-bus.js';
import type { BubbleStore, DurableSync } from '../store.js';
import { openSqliteStore } from './sqlite-store.js';

/** Syncs held until the test lets them go (each really runs once let go), or failed. */
class HeldSyncs {
  readonly waiting: Array<{ run: () => void; fail: (error: Error) => void }> = [];
  started = 0;

  wrap = (sync: DurableSync): DurableSync => {
    return (done) => {
      this.started += 1;
      this.waiting.push({ run: () => sync(done), fail: (error) => done(error) });
    };
  };

  async release(): Promise<void> {
    const next = this.waiting.shift();
    if (next === undefined) throw new Error('no sync is waiting');
    next.run();
    await settle();
  }
}

/** Lets the thread pool's fdatasync and the callbacks behind it run. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
};

const note = (text: string, clientEventId?: string) => ({ type: 'acme.note', data: { text }, clientEventId });

describe('sqlite: commits made durable off the event loop', () => {
  let dir: string;
  let path: string;
  let store: BubbleStore;
  let syncs: HeldSyncs;
  let published: LiveBusMessage[];
  let threadId: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bubble-durable-'));
    path = join(dir, 'bubble.db');
    syncs = new HeldSyncs();
    published = [];
    store = await openSqliteStore(
      path,
      { onCommit: (messages) => published.push(...messages) },
      { wrapDurableSync: syncs.wrap },
    );
    // The setup's writes are let through one sync at a time, like every other.
    const setup = Promise.all([
      store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] }),
    ]);
    await settle();
    while (syncs.waiting.length > 0) await syncs.release();
    await setup;
    const created = store.createThread({
      threadId: 'th_durable000001',
      parentThreadId: null,
      title: 't',
      createdBy: 'alice',
      key: null,
    });
    await settle();
    await syncs.release();
    threadId = (await created).thread.threadId;
    published = [];
  });

  afterEach(async () => {
    while (syncs.waiting.length > 0) await syncs.release();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers, publishes and shows an append only once its sync has answered', async () => {
    let answered = false;
    const append = store.appendEvents({ threadId, principalId: 'alice', events: [note('one')] }).then((result) => {
      answered = true;
      return result;
    });
    await settle();
    expect(syncs.waiting).toHaveLength(1);
    expect(answered).toBe(false);
    expect(published).toEqual([]);
    const before = await store.readEventsAfter(threadId, 0, 100);
    expect(before.headSeq).toBe(1);
    expect(before.events.map((e) => e.seq)).toEqual([1]);
    expect((await store.getThread(threadId))?.headSeq).toBe(1);
    expect((await store.listThreadsWithLiveGrant('alice')).map((t) => t.headSeq)).toEqual([1]);
    expect((await store.readEventsBefore(threadId, 100, 10)).events.map((e) => e.seq)).toEqual([1]);

    await syncs.release();
    expect(answered).toBe(true);
    expect((await append).events.map((e) => e.seq)).toEqual([2]);
    expect(published).toMatchObject([{ kind: 'events', threadId, events: [{ seq: 2 }] }]);
    const after = await store.readEventsAfter(threadId, 0, 100);
    expect(after.headSeq).toBe(2);
    expect(after.events.map((e) => e.seq)).toEqual([1, 2]);
    expect((await store.getThread(threadId))?.headSeq).toBe(2);
  });

  it('makes every write committed while a sync runs durable with the next one, published in commit order', async () => {
    const first = store.appendEvents({ threadId, principalId: 'alice', events: [note('a')] });
    await settle();
    expect(syncs.started).toBe(3);
    // Five more, each in its own event-loop turn (so its own group), while the first sync is held.
    const more: Array<Promise<unknown>> = [];
    for (const text of ['b', 'c', 'd', 'e', 'f']) {
      more.push(store.appendEvents({ threadId, principalId: 'alice', events: [note(text)] }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(syncs.started).toBe(3);
    // The first sync covers only the first group: seqs 3 to 7 stay hidden, in order behind it.
    await syncs.release();
    await first;
    expect((await store.readEventsAfter(threadId, 0, 100)).headSeq).toBe(2);
    expect(syncs.started).toBe(4);
    await syncs.release();
    await Promise.all(more);
    expect(syncs.started).toBe(4);
    const seqs = published.flatMap((m) => (m.kind === 'events' ? m.events.map((e) => e.seq) : []));
    expect(seqs).toEqual([2, 3, 4, 5, 6, 7]);
    expect((await store.readEventsAfter(threadId, 0, 100)).events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('answers an idempotent retry no sooner than the append it repeats is durable', async () => {
    const original = store.appendEvents({ threadId, principalId: 'alice', events: [note('once', 'c-1')] });
    await settle();
    let retried = false;
    const retry = store
      .appendEvents({ threadId, principalId: 'alice', events: [note('once', 'c-1')] })
      .then((result) => {
        retried = true;
        return result;
      });
    await settle();
    expect(retried).toBe(false);
    await syncs.release();
    expect(retried).toBe(false);
    await syncs.release();
    expect((await retry).replay).toBe(true);
    expect((await retry).events[0]?.seq).toBe((await original).events[0]?.seq);
  });

  it('fails the writes of a failed sync with 503, those waiting behind it and every later one, and never shows their events', async () => {
    const lost = store.appendEvents({ threadId, principalId: 'alice', events: [note('lost')] });
    await settle();
    // Committed while the sync is out: it waits for the next one.
    const behind = store.appendEvents({ threadId, principalId: 'alice', events: [note('behind')] });
    await settle();
    const failing = syncs.waiting.shift();
    if (failing === undefined) throw new Error('no sync is waiting');
    failing.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(lost).rejects.toMatchObject({ status: 503 });
    await expect(behind).rejects.toMatchObject({ status: 503, message: expect.stringContaining('restart') });
    await expect(store.ping()).rejects.toMatchObject({ status: 503 });
    await expect(store.appendEvents({ threadId, principalId: 'alice', events: [note('later')] })).rejects.toMatchObject(
      { status: 503 },
    );
    expect(published).toEqual([]);
    const read = await store.readEventsAfter(threadId, 0, 100);
    expect(read.headSeq).toBe(1);
    expect(read.events.map((e) => e.seq)).toEqual([1]);
  });
});
