import type { EventEnvelope } from '@bubble/protocol';

/** Takes the next `count` items of an async iterator (without ending it). */
export async function take<T>(iterator: AsyncIterator<T>, count: number): Promise<T[]> {
  const items: T[] = [];
  while (items.length < count) {
    const result = await iterator.next();
    if (result.done) throw new Error(`the iterable ended after ${items.length} of ${count} items`);
    items.push(result.value);
  }
  return items;
}

/** Resolves when `predicate` holds, polling; rejects after `timeoutMs` (a guard, not a measurement). */
export async function waitUntil(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function seqs(events: readonly EventEnvelope[]): number[] {
  return events.map((event) => event.seq);
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** The result of the iterator's next call: an item, the end, or the error it threw. */
export async function settle<T>(
  promise: Promise<IteratorResult<T>>,
): Promise<{ value?: T; done?: boolean; error?: unknown }> {
  try {
    const result = await promise;
    return result.done ? { done: true } : { value: result.value };
  } catch (error) {
    return { error };
  }
}
