/**
 * An immutable map from strings, for the fold's indexes (run id → position, tool call id →
 * position): a hash trie of 32-way branches, so a new key copies one path of small nodes
 * instead of a record of every key (a thread of thousands of runs would otherwise copy all their
 * ids on each new run). Never changed once made; `set` returns a new map sharing the rest.
 */
export interface PersistentMap<V> {
  readonly size: number;
  readonly root: TrieNode<V>;
}

type Entry<V> = readonly [key: string, value: V];
type TrieNode<V> = { readonly entries: readonly Entry<V>[] } | { readonly slots: readonly (TrieNode<V> | undefined)[] };

const BITS = 5;
const WIDTH = 1 << BITS;
/** A leaf holds up to this many keys before it splits into a branch. */
const LEAF_SIZE = 8;
/** Past this depth the 32-bit hash is used up: a leaf just grows (keys whose hashes collide). */
const MAX_DEPTH = 6;

export function emptyMap<V>(): PersistentMap<V> {
  return { size: 0, root: { entries: [] } };
}

/** FNV-1a over UTF-16 code units: fast, and spreads ids that differ only at the end. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const slotOf = (h: number, depth: number): number => (h >>> (depth * BITS)) & (WIDTH - 1);

export function mapGet<V>(map: PersistentMap<V>, key: string): V | undefined {
  const h = hash(key);
  let node = map.root;
  for (let depth = 0; ; depth++) {
    if ('entries' in node) {
      for (const [k, v] of node.entries) if (k === key) return v;
      return undefined;
    }
    const next = node.slots[slotOf(h, depth)];
    if (next === undefined) return undefined;
    node = next;
  }
}

export function mapSet<V>(map: PersistentMap<V>, key: string, value: V): PersistentMap<V> {
  const added = { value: false };
  const root = setIn(map.root, key, hash(key), value, 0, added);
  return root === map.root ? map : { size: map.size + (added.value ? 1 : 0), root };
}

function setIn<V>(
  node: TrieNode<V>,
  key: string,
  h: number,
  value: V,
  depth: number,
  added: { value: boolean },
): TrieNode<V> {
  if ('slots' in node) {
    const slot = slotOf(h, depth);
    const child = node.slots[slot] ?? { entries: [] };
    const updated = setIn(child, key, h, value, depth + 1, added);
    if (updated === node.slots[slot]) return node;
    const slots = node.slots.slice();
    slots[slot] = updated;
    return { slots };
  }
  const at = node.entries.findIndex(([k]) => k === key);
  if (at >= 0) {
    if (Object.is(node.entries[at]![1], value)) return node;
    const entries = node.entries.slice();
    entries[at] = [key, value];
    return { entries };
  }
  added.value = true;
  const entries = [...node.entries, [key, value] as const];
  if (entries.length <= LEAF_SIZE || depth >= MAX_DEPTH) return { entries };
  // Split: each entry goes one level down, by the next bits of its hash.
  let branch: TrieNode<V> = { slots: new Array<TrieNode<V> | undefined>(WIDTH).fill(undefined) };
  for (const [k, v] of entries) branch = setIn(branch, k, hash(k), v, depth, { value: false });
  return branch;
}

/** Every entry, in no particular order. */
export function mapEntries<V>(map: PersistentMap<V>): Array<Entry<V>> {
  const out: Array<Entry<V>> = [];
  const walk = (node: TrieNode<V>): void => {
    if ('entries' in node) out.push(...node.entries);
    else for (const child of node.slots) if (child !== undefined) walk(child);
  };
  walk(map.root);
  return out;
}
