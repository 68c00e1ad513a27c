/**
 * An immutable list for the fold's collections that grow with the thread (runs, tool calls, the
 * timeline): full chunks of 32 items, and a tail of up to 32 after them. Replacing or appending
 * an item copies one chunk (and, outside the tail, the short list of chunks), never every item,
 * where a plain array would copy all of a thread's runs on each delta. Most events touch the
 * newest items, which sit in the tail, so they copy 32 slots at most. (A 16-way trie copied no
 * less in the bench, and reads slower.) Never changed once made.
 */
export interface PersistentList<T> {
  readonly length: number;
  /** Full chunks of CHUNK items, in order. */
  readonly chunks: readonly (readonly T[])[];
  /** The last items, after the chunks: fewer than CHUNK, or exactly CHUNK before the next push moves them. */
  readonly tail: readonly T[];
}

const CHUNK_BITS = 5;
const CHUNK = 1 << CHUNK_BITS;
const EMPTY: PersistentList<never> = Object.freeze({ length: 0, chunks: Object.freeze([]), tail: Object.freeze([]) });

export function emptyList<T>(): PersistentList<T> {
  return EMPTY;
}

const tailStart = (list: PersistentList<unknown>): number => list.chunks.length << CHUNK_BITS;

export function listGet<T>(list: PersistentList<T>, index: number): T | undefined {
  if (index < 0 || index >= list.length) return undefined;
  const start = tailStart(list);
  return index >= start ? list.tail[index - start] : list.chunks[index >> CHUNK_BITS]![index & (CHUNK - 1)];
}

export function listPush<T>(list: PersistentList<T>, item: T): PersistentList<T> {
  if (list.tail.length < CHUNK) return { length: list.length + 1, chunks: list.chunks, tail: [...list.tail, item] };
  return { length: list.length + 1, chunks: [...list.chunks, list.tail], tail: [item] };
}

export function listSet<T>(list: PersistentList<T>, index: number, item: T): PersistentList<T> {
  if (index < 0 || index >= list.length) throw new RangeError(`no item ${index} in a list of ${list.length}`);
  if (listGet(list, index) === item) return list;
  const start = tailStart(list);
  if (index >= start) {
    const tail = list.tail.slice();
    tail[index - start] = item;
    return { length: list.length, chunks: list.chunks, tail };
  }
  const at = index >> CHUNK_BITS;
  const chunk = list.chunks[at]!.slice();
  chunk[index & (CHUNK - 1)] = item;
  const chunks = list.chunks.slice();
  chunks[at] = chunk;
  return { length: list.length, chunks, tail: list.tail };
}

const arrays = new WeakMap<object, readonly unknown[]>();

/** The items as one array: made once per list (a list never changes), so a view may ask on every render. */
export function listItems<T>(list: PersistentList<T>): readonly T[] {
  const cached = arrays.get(list);
  // Only `listItems` fills the cache, with this list's own items.
  if (cached !== undefined) return cached as readonly T[];
  const items: readonly T[] = Object.freeze([...list.chunks.flat(), ...list.tail]);
  arrays.set(list, items);
  return items;
}
