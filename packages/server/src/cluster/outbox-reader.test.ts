import { describe, expect, it } from 'vitest';
import type { OutboxEntry } from '../store/cluster-feed.js';
import { OutboxReader } from './outbox-reader.js';

const entry = (id: number): OutboxEntry => ({
  id,
  message: { kind: 'tokens_revoked', principalId: `p${id}`, tokenIds: [`tok_${id}`] },
});

/** An outbox whose rows become visible when their transaction commits, in any order. */
class FakeOutbox {
  visible: OutboxEntry[] = [];
  reads = 0;
  fail = false;
  commit(...ids: number[]): void {
    this.visible.push(...ids.map(entry));
    this.visible.sort((a, b) => a.id - b.id);
  }
  async outboxHead(): Promise<number> {
    return this.visible.at(-1)?.id ?? 0;
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
  const reader = await OutboxReader.start({
    feed: outbox,
    deliver: (e) => delivered.push(e.id),
    onError: (e) => errors.push(e),
    pollMs: 60_000,
    now,
  });
  return { reader, delivered, errors };
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
