import { describe, expect, it } from 'vitest';
import { AsyncQueue } from './async-queue.js';

const queue = () => new AsyncQueue<number>({ secondReader: () => new Error('one reader only') });
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('AsyncQueue', () => {
  it('hands items over in order; a pull waits for the next push', async () => {
    const q = queue();
    expect(q.push(1)).toBe(true);
    expect(q.size).toBe(1);
    const items = q[Symbol.asyncIterator]();
    expect(await items.next()).toEqual({ value: 1, done: false });
    let settled = false;
    const pending = items.next().then((result) => {
      settled = true;
      return result;
    });
    await tick();
    expect(settled).toBe(false);
    q.push(2);
    expect(await pending).toEqual({ value: 2, done: false });
    expect(q.size).toBe(0);
  });

  it('keeps falsy items (0 is an item, not the end)', async () => {
    const q = queue();
    q.push(0);
    q.end();
    const seen: number[] = [];
    for await (const item of q) seen.push(item);
    expect(seen).toEqual([0]);
  });

  it('after end(): the reader gets what was pushed, then finishes; a waiting pull finishes at once', async () => {
    const q = queue();
    q.push(1);
    q.push(2);
    q.end();
    expect(q.ended).toBe(true);
    expect(q.push(3)).toBe(false);
    const seen: number[] = [];
    for await (const item of q) seen.push(item);
    expect(seen).toEqual([1, 2]);

    const other = queue();
    const waiting = other[Symbol.asyncIterator]().next();
    other.end();
    other.end();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });

  it('when the reader leaves: what was left is dropped and later pushes are refused', async () => {
    const q = queue();
    q.push(1);
    q.push(2);
    for await (const item of q) {
      expect(item).toBe(1);
      break;
    }
    expect(q.ended).toBe(true);
    expect(q.size).toBe(0);
    expect(q.push(3)).toBe(false);
  });

  it('a reader that leaves while it waits finishes its pending pull', async () => {
    const q = queue();
    const items = q[Symbol.asyncIterator]();
    const pending = items.next();
    await items.return?.();
    expect(await pending).toEqual({ value: undefined, done: true });
  });

  it('has one reader: a second one gets the owner’s error at once', () => {
    const q = queue();
    q[Symbol.asyncIterator]();
    expect(() => q[Symbol.asyncIterator]()).toThrow('one reader only');
  });
});
