import { describe, expect, it } from 'vitest';
import { RunQueue, type RunQueueSnapshot } from './run-queue.js';
import { EngineError } from './engine-error.js';

describe('RunQueue', () => {
  it('grants slots first come first served and shows queue positions', async () => {
    const changes: RunQueueSnapshot[] = [];
    const queue = new RunQueue({ size: 2, onChange: (s) => changes.push(s) });
    const a = queue.enqueue({ id: 'a' });
    const b = queue.enqueue({ id: 'b' });
    const c = queue.enqueue({ id: 'c' });
    const d = queue.enqueue({ id: 'd' });
    expect([a.position(), b.position(), c.position(), d.position()]).toEqual([0, 0, 1, 2]);
    expect(queue.snapshot()).toEqual({ running: ['a', 'b'], waiting: ['c', 'd'] });

    const order: string[] = [];
    void c.acquired.then(() => order.push('c'));
    void d.acquired.then(() => order.push('d'));
    const releaseB = await b.acquired;
    releaseB();
    await c.acquired;
    expect(order).toEqual(['c']);
    expect([a.position(), b.position(), c.position(), d.position()]).toEqual([0, null, 0, 1]);
    (await a.acquired)();
    await d.acquired;
    expect(order).toEqual(['c', 'd']);
    expect(changes.at(-1)).toEqual({ running: ['c', 'd'], waiting: [] });
  });

  it('a release is idempotent: calling it twice frees one slot only', async () => {
    const queue = new RunQueue({ size: 1 });
    const release = await queue.acquire({ id: 'x' });
    const y = queue.enqueue({ id: 'y' });
    queue.enqueue({ id: 'z' });
    release();
    release();
    await y.acquired;
    expect(queue.snapshot()).toEqual({ running: ['y'], waiting: ['z'] });
  });

  it('cancels a queued waiter on abort: it leaves the line and rejects clearly; others move up', async () => {
    const queue = new RunQueue({ size: 1 });
    const release = await queue.acquire({ id: 'holder' });
    const controller = new AbortController();
    const cancelled = queue.enqueue({ id: 'impatient', signal: controller.signal });
    const patient = queue.enqueue({ id: 'patient' });
    expect(patient.position()).toBe(2);
    controller.abort(new Error('user gave up'));
    await expect(cancelled.acquired).rejects.toMatchObject({ code: 'run_queue_cancelled', retryable: true });
    await expect(cancelled.acquired).rejects.toThrow(/impatient was cancelled while waiting/);
    expect(cancelled.position()).toBeNull();
    expect(patient.position()).toBe(1);
    release();
    await patient.acquired;
    expect(queue.snapshot()).toEqual({ running: ['patient'], waiting: [] });
  });

  it('an abort after the slot was granted does not release it', async () => {
    const queue = new RunQueue({ size: 1 });
    const controller = new AbortController();
    const ticket = queue.enqueue({ id: 'a', signal: controller.signal });
    await ticket.acquired;
    controller.abort();
    expect(ticket.position()).toBe(0);
  });

  it('rejects an already-aborted signal without taking a slot', async () => {
    const queue = new RunQueue({ size: 1 });
    const controller = new AbortController();
    controller.abort();
    await expect(queue.acquire({ signal: controller.signal })).rejects.toBeInstanceOf(EngineError);
    expect(queue.snapshot()).toEqual({ running: [], waiting: [] });
  });

  it('refuses a bad size and a duplicate ticket id', () => {
    expect(() => new RunQueue({ size: 0 })).toThrow(/positive integer/);
    expect(() => new RunQueue({ size: 1.5 })).toThrow(/positive integer/);
    const queue = new RunQueue({ size: 1 });
    queue.enqueue({ id: 'same' });
    expect(() => queue.enqueue({ id: 'same' })).toThrow(/already queued or running/);
  });

  it('tryAcquire takes a free slot only when nobody waits, and never queues', async () => {
    const queue = new RunQueue({ size: 2 });
    const spare = queue.tryAcquire('spare-1');
    expect(spare).toBeTypeOf('function');
    const a = await queue.acquire({ id: 'a' });
    expect(queue.tryAcquire('spare-2')).toBeUndefined();
    const waiting = queue.enqueue({ id: 'b' });
    spare!();
    await waiting.acquired;
    a();
    // A slot is free now, but nothing else waits: tryAcquire may take it.
    expect(queue.tryAcquire('spare-2')).toBeTypeOf('function');
    expect(queue.snapshot()).toEqual({ running: ['b', 'spare-2'], waiting: [] });
  });

  it('transfer hands a slot to another ticket without freeing it; the old release frees nothing', async () => {
    const queue = new RunQueue({ size: 1 });
    const seen: string[][] = [];
    const unsubscribe = queue.subscribe((s) => seen.push([...s.running]));
    const old = queue.tryAcquire('spare-1')!;
    const waiting = queue.enqueue({ id: 'c' });
    const release = queue.transfer('spare-1', 'a#1');
    expect(queue.snapshot()).toEqual({ running: ['a#1'], waiting: ['c'] });
    old();
    expect(queue.snapshot().running).toEqual(['a#1']);
    release();
    await waiting.acquired;
    expect(seen).toEqual([['spare-1'], ['spare-1'], ['a#1'], ['c']]);
    unsubscribe();
    expect(() => queue.transfer('spare-1', 'x')).toThrow(/holds no slot/);
    expect(() => queue.transfer('c', 'c')).toThrow(/already queued or running/);
  });
});
