import { describe, expect, it } from 'vitest';
import type { OutboxEntry } from '../store/cluster-feed.js';
import { OutboxReader } from './outbox-reader.js';

const entry = (id: number, createdAt: string): OutboxEntry => ({
  id,
  message: { kind: 'tokens_revoked', principalId: `p${id}`, tokenIds: [`tok_${id}`] },
  createdAt,
});

/** An outbox whose rows become visible when their transaction commits, in any order. */
class FakeOutbox {
  visible: OutboxEntry[] = [];
  reads = 0;
  fail = false;
  /** The database's clock, which stamps the entries: unrelated to the reader's. */
  writtenAt = '2026-12-01T10:00:00.000Z';
  commit(...ids: number[]): void {
    this.visible.push(...ids.map((id) => entry(id, this.writtenAt)));
    this.visible.sort((a, b) => a.id - b.id);
  }
  /** Deletes every entry below `id`, as the pruner deletes a prefix. */
  prune(id: number): void {
    this.visible = this.visible.filter((e) => e.id >= id);
  }
  /** What the database's clock said when asked (a reader asks as it starts). */
  now = '2026-12-01T09:30:00.000Z';
  async databaseNow(): Promise<string> {
    return this.now;
  }
  async outboxHead(): Promise<number> {
    return this.visible.at(-1)?.id ?? 0;
  }
  async outboxTail(): Promise<number> {
    return this.visible[0]?.id ?? 0;
  }
  async readOutboxAfter(cursor: number, limit: number): Promise<OutboxEntry[]> {
    this.reads += 1;
    if (this.fail) throw new Error('database down');
    return this.visible.filter((e) => e.id > cursor).slice(0, limit);
  }
}

async function start(outbox: FakeOutbox, now: () => number = Date.now) {
  const delivered: number[] = [];
  const errors: unknown[] = [];
  /** The `since` of each `onOverflow` call; `failOverflow` makes the next ones reject. */
  const overflows: string[] = [];
  const control = { failOverflow: false };
  const reader = await OutboxReader.start({
    feed: outbox,
    deliver: (e) => delivered.push(e.id),
    onOverflow: async (since) => {
      overflows.push(since);
      if (control.failOverflow) throw new Error('re-check failed');
    },
    onError: (e) => errors.push(e),
    pollMs: 60_000,
    now,
  });
  return { reader, delivered, errors, overflows, control };
}

describe('OutboxReader', () => {
  it('starts at the head and delivers what commits later, once, in id order', async () => {
    const outbox = new FakeOutbox();
    outbox.commit(1, 2);
    const { reader, delivered } = await start(outbox);
    outbox.commit(3, 4);
    await reader.read();
    await reader.read();
    expect(delivered).toEqual([3, 4]);
    reader.stop();
  });

  it('delivers an id that commits after higher ones were read (a hole), and only once', async () => {
    const outbox = new FakeOutbox();
    const { reader, delivered } = await start(outbox);
    outbox.commit(1, 3);
    await reader.read();
    outbox.commit(2);
    await reader.read();
    await reader.read();
    expect(delivered).toEqual([1, 3, 2]);
    reader.stop();
  });

  it('waits for ids missing just below its starting head (their transactions may still commit)', async () => {
    const outbox = new FakeOutbox();
    outbox.commit(1, 3);
    const { reader, delivered } = await start(outbox);
    outbox.commit(2, 4);
    await reader.read();
    expect(delivered).toEqual([2, 4]);
    reader.stop();
  });

  it('gives a hole up after 30 s (a rolled-back transaction never fills it)', async () => {
    let now = 0;
    const outbox = new FakeOutbox();
    const { reader, delivered } = await start(outbox, () => now);
    outbox.commit(1, 3);
    await reader.read();
    now = 31_000;
    await reader.read();
    outbox.commit(2);
    await reader.read();
    expect(delivered).toEqual([1, 3]);
    reader.stop();
  });

  it('reads past a full page, and a wake for an id already read costs no read', async () => {
    const outbox = new FakeOutbox();
    const { reader, delivered } = await start(outbox);
    outbox.commit(...Array.from({ length: 1200 }, (_, i) => i + 1));
    await reader.read();
    expect(delivered).toHaveLength(1200);
    const reads = outbox.reads;
    reader.wake(1200);
    await reader.read();
    expect(outbox.reads).toBe(reads + 1);
    reader.stop();
  });

  it('reports a failed read and goes on from the same place', async () => {
    const outbox = new FakeOutbox();
    const { reader, delivered, errors } = await start(outbox);
    outbox.commit(1);
    outbox.fail = true;
    await reader.read();
    expect(errors).toHaveLength(1);
    outbox.fail = false;
    await reader.read();
    expect(delivered).toEqual([1]);
    reader.stop();
  });

  it('finds entries it never read pruned: moves on to what is kept and re-checks since the newest it had read was written', async () => {
    let now = 1_000;
    const outbox = new FakeOutbox();
    outbox.commit(1, 2);
    const { reader, delivered, overflows, errors } = await start(outbox, () => now);
    now = 2_000;
    await reader.read();
    // Cut off: 3 to 6 commit, and 3 to 5 are pruned before this reader reads again.
    outbox.fail = true;
    now = 3_000;
    outbox.writtenAt = '2026-12-01T10:01:00.000Z';
    outbox.commit(3, 4, 5, 6);
    await reader.read();
    outbox.prune(6);
    outbox.fail = false;
    now = 900_000;
    await reader.read();
    expect(delivered).toEqual([6]);
    // The newest entry it had read, 2, was written at 10:00 by the database's clock (the reader's own
    // says something else altogether): everything after that is re-checked.
    expect(overflows).toEqual(['2026-12-01T10:00:00.000Z']);
    expect(errors).toHaveLength(1);
    // The missing ids are given up, not waited for: no more re-checks, and 7 comes as usual.
    outbox.commit(7);
    await reader.read();
    expect(delivered).toEqual([6, 7]);
    expect(overflows).toHaveLength(1);
    reader.stop();
  });

  it('counts a read with a re-check as complete only once the re-check succeeded, and retries it', async () => {
    let now = 1_000;
    const outbox = new FakeOutbox();
    const { reader, delivered, overflows, control, errors } = await start(outbox, () => now);
    outbox.commit(1, 2, 3);
    outbox.prune(3);
    control.failOverflow = true;
    now = 5_000;
    await reader.read();
    expect(delivered).toEqual([3]);
    expect(errors).toHaveLength(1);
    expect(reader.lastCompleteReadStartedAt).toBe(1_000);
    control.failOverflow = false;
    now = 6_000;
    await reader.read();
    // It had read no entry: what it missed was written after it started, by the database's clock.
    expect(overflows).toEqual(['2026-12-01T09:30:00.000Z', '2026-12-01T09:30:00.000Z']);
    expect(reader.lastCompleteReadStartedAt).toBe(6_000);
    await reader.read();
    expect(overflows).toHaveLength(2);
    reader.stop();
  });

  it('a gap that is only a hole (the oldest entry kept is below it) is no overflow', async () => {
    const outbox = new FakeOutbox();
    outbox.commit(1);
    const { reader, delivered, overflows } = await start(outbox);
    outbox.commit(3);
    await reader.read();
    outbox.commit(2);
    await reader.read();
    expect(delivered).toEqual([3, 2]);
    expect(overflows).toEqual([]);
    reader.stop();
  });

  it('a read asked for while one runs makes it go round again', async () => {
    const outbox = new FakeOutbox();
    const { reader, delivered } = await start(outbox);
    outbox.commit(1);
    const first = reader.read();
    outbox.commit(2);
    const second = reader.read();
    await Promise.all([first, second]);
    expect(delivered).toEqual([1, 2]);
    reader.stop();
  });
});
