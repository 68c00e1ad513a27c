import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { ThreadSequencers, type SequencerSource } from './thread-sequencer.js';

const T = 'th_a';

function envelope(threadId: string, seq: number): EventEnvelope {
  return {
    id: `ev_${threadId}_${seq}`,
    threadId,
    seq,
    type: 'acme.n',
    principalId: 'alice',
    data: { seq },
    clientEventId: null,
    createdAt: '2026-12-01T00:00:00.000Z',
  };
}

/** An event log standing in for the database; reads see it as it is when they run, after `delay`. */
class FakeLog implements SequencerSource {
  readonly threads = new Map<string, EventEnvelope[]>();
  reads = 0;
  failNext = 0;
  delay: () => Promise<void> = () => Promise.resolve();

  append(threadId: string, count: number): EventEnvelope[] {
    const log = this.threads.get(threadId) ?? [];
    this.threads.set(threadId, log);
    const added: EventEnvelope[] = [];
    for (let i = 0; i < count; i += 1) added.push(envelope(threadId, log.length + 1 + i));
    log.push(...added);
    return added;
  }

  head(threadId: string): number {
    return this.threads.get(threadId)?.length ?? 0;
  }

  async readEventsAfter(threadId: string, afterSeq: number, limit: number) {
    this.reads += 1;
    await this.delay();
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('connection reset');
    }
    const log = this.threads.get(threadId) ?? [];
    return { events: log.slice(afterSeq, afterSeq + limit), headSeq: log.length };
  }

  async threadHeads(threadIds: readonly string[]) {
    await this.delay();
    return new Map(threadIds.filter((id) => this.threads.has(id)).map((id) => [id, this.head(id)] as const));
  }
}

function harness(log: FakeLog, options: { pageSize?: number; retryMs?: number } = {}) {
  const published = new Map<string, number[]>();
  const errors: unknown[] = [];
  const sequencers = new ThreadSequencers({
    source: log,
    publish: (threadId, events) => {
      const seqs = published.get(threadId) ?? [];
      published.set(threadId, seqs);
      seqs.push(...events.map((e) => e.seq));
    },
    onReadError: (error) => errors.push(error),
    retryMs: options.retryMs ?? 1,
    pageSize: options.pageSize ?? 500,
  });
  const seqs = (threadId = T) => published.get(threadId) ?? [];
  return { sequencers, seqs, errors };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
};

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('ThreadSequencers', () => {
  it('publishes an own commit right after the last published seq at once, in the same turn', async () => {
    const log = new FakeLog();
    log.append(T, 5);
    const { sequencers, seqs } = harness(log);
    await sequencers.watch(T).ready;
    sequencers.offer(T, log.append(T, 2));
    expect(seqs()).toEqual([6, 7]);
    expect(log.reads).toBe(0);
  });

  it('passes commits of threads nobody here serves straight through, and ignores hints about them', async () => {
    const log = new FakeLog();
    const { sequencers, seqs } = harness(log);
    sequencers.offer(T, log.append(T, 3));
    sequencers.hint('th_other', 9);
    await settle();
    expect(seqs()).toEqual([1, 2, 3]);
    expect(log.reads).toBe(0);
  });

  it('holds an own commit that lands beyond a gap, reads the gap, and publishes both in order', async () => {
    const log = new FakeLog();
    log.append(T, 8);
    const { sequencers, seqs } = harness(log);
    await sequencers.watch(T).ready;
    log.append(T, 1); // seq 9, committed by another instance; its hint has not arrived
    sequencers.offer(T, log.append(T, 1)); // seq 10, ours
    expect(seqs()).toEqual([]);
    await settle();
    expect(seqs()).toEqual([9, 10]);
    sequencers.hint(T, 9); // the late hint changes nothing
    await settle();
    expect(seqs()).toEqual([9, 10]);
  });

  it('reads up to a hinted head in pages', async () => {
    const log = new FakeLog();
    log.append(T, 2);
    const { sequencers, seqs } = harness(log, { pageSize: 3 });
    await sequencers.watch(T).ready;
    log.append(T, 10);
    sequencers.hint(T, 12);
    await settle();
    expect(seqs()).toEqual(range(3, 12));
    expect(log.reads).toBe(4);
  });

  it('keeps own commits made during a read behind what the read returns', async () => {
    const log = new FakeLog();
    const { sequencers, seqs } = harness(log);
    await sequencers.watch(T).ready;
    let release = (): void => {};
    log.delay = () => new Promise<void>((r) => (release = r));
    log.append(T, 4);
    sequencers.hint(T, 4);
    sequencers.offer(T, log.append(T, 1)); // 5 arrives while the read of 1..4 is in flight
    sequencers.offer(T, log.append(T, 2)); // 6, 7
    expect(seqs()).toEqual([]);
    log.delay = () => Promise.resolve();
    release();
    await settle();
    expect(seqs()).toEqual(range(1, 7));
  });

  it('starts a newly served thread at the head it reads, dropping own commits at or below it', async () => {
    const log = new FakeLog();
    log.append(T, 3);
    const { sequencers, seqs } = harness(log);
    const watch = sequencers.watch(T);
    sequencers.offer(T, log.append(T, 1)); // seq 4 commits while the head is read: the read sees it
    await watch.ready;
    sequencers.offer(T, log.append(T, 1));
    expect(seqs()).toEqual([5]);
  });

  it('retries a failed read with backoff and reports the failure', async () => {
    const log = new FakeLog();
    const { sequencers, seqs, errors } = harness(log);
    await sequencers.watch(T).ready;
    log.append(T, 3);
    log.failNext = 2;
    sequencers.hint(T, 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(errors).toHaveLength(2);
    expect(seqs()).toEqual([1, 2, 3]);
  });

  it('rejects ready when the head cannot be read, and starts afresh on the next watch', async () => {
    const log = new FakeLog();
    log.append(T, 2);
    const { sequencers } = harness(log);
    const heads = log.threadHeads.bind(log);
    log.threadHeads = () => Promise.reject(new Error('database down'));
    await expect(sequencers.watch(T).ready).rejects.toThrow('database down');
    log.threadHeads = heads;
    await expect(sequencers.watch(T).ready).resolves.toBeUndefined();
  });

  it('forgets a thread when its last watch is released (release is idempotent)', async () => {
    const log = new FakeLog();
    const { sequencers, seqs } = harness(log);
    const a = sequencers.watch(T);
    const b = sequencers.watch(T);
    await a.ready;
    a.release();
    a.release();
    expect(sequencers.servedThreads()).toEqual([T]);
    b.release();
    expect(sequencers.servedThreads()).toEqual([]);
    log.append(T, 2);
    sequencers.hint(T, 2);
    await settle();
    expect(seqs()).toEqual([]);
  });

  it('catches up the served threads whose heads moved when re-checked', async () => {
    const log = new FakeLog();
    log.append(T, 1);
    log.append('th_b', 1);
    const { sequencers, seqs } = harness(log);
    await Promise.all([sequencers.watch(T).ready, sequencers.watch('th_b').ready]);
    log.append(T, 2); // notifications lost
    await sequencers.recheck();
    await settle();
    expect(seqs()).toEqual([2, 3]);
    expect(seqs('th_b')).toEqual([]);
  });

  it('publishes every seq exactly once, in order, whatever the interleaving of own commits, hints and slow reads', async () => {
    for (let seed = 1; seed <= 30; seed += 1) {
      let state = seed;
      const random = (): number => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state / 2 ** 31;
      };
      const log = new FakeLog();
      log.delay = () =>
        random() < 0.5 ? Promise.resolve() : new Promise((r) => setTimeout(r, Math.floor(random() * 3)));
      const { sequencers, seqs } = harness(log, { pageSize: 1 + Math.floor(random() * 5) });
      log.append(T, Math.floor(random() * 5));
      const watched = sequencers.watch(T).ready;
      const lateHints: number[] = [];
      for (let step = 0; step < 200; step += 1) {
        const roll = random();
        const count = 1 + Math.floor(random() * 3);
        if (roll < 0.4) sequencers.offer(T, log.append(T, count));
        else if (roll < 0.8) lateHints.push((log.append(T, count).at(-1) as EventEnvelope).seq);
        else if (lateHints.length > 0)
          sequencers.hint(T, lateHints.splice(Math.floor(random() * lateHints.length), 1)[0]!);
        if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 2)));
      }
      await watched;
      for (const head of lateHints) sequencers.hint(T, head);
      for (let i = 0; i < 200 && (seqs().at(-1) ?? 0) < log.head(T); i += 1) await new Promise((r) => setTimeout(r, 2));
      const published = seqs();
      const first = published[0] ?? log.head(T) + 1;
      expect(published, `seed ${seed}`).toEqual(range(first, log.head(T)));
    }
  });
});
