import { describe, expect, it } from 'vitest';
import { deepFreeze } from './__fixtures__/fixtures.js';
import { emptyList, listGet, listItems, listPush, listSet, type PersistentList } from './persistent-list.js';
import { emptyMap, mapEntries, mapGet, mapSet, type PersistentMap } from './persistent-map.js';

/** A small seeded generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('PersistentList', () => {
  it.each([0, 1, 31, 32, 33, 64, 65, 1000])('holds %i items in order, each version unchanged by later ones', (n) => {
    const versions: PersistentList<number>[] = [deepFreeze(emptyList())];
    for (let i = 0; i < n; i++) versions.push(deepFreeze(listPush(versions.at(-1)!, i)));
    versions.forEach((list, length) => {
      expect(list.length).toBe(length);
      expect(listItems(list)).toEqual(Array.from({ length }, (_, i) => i));
    });
    expect([listGet(versions.at(-1)!, -1), listGet(versions.at(-1)!, n)]).toEqual([undefined, undefined]);
  });

  it('replaces one item, in a chunk or in the tail, sharing everything else', () => {
    let list: PersistentList<string> = emptyList();
    for (let i = 0; i < 70; i++) list = deepFreeze(listPush(list, `v${i}`));
    for (const index of [0, 31, 32, 63, 64, 69]) {
      const changed = deepFreeze(listSet(list, index, 'new'));
      expect(listItems(changed).map((item, i) => (i === index ? item : item === listGet(list, i)))).toEqual(
        listItems(list).map((_, i) => (i === index ? 'new' : true)),
      );
      expect(listGet(list, index)).toBe(`v${index}`);
    }
    expect(listSet(list, 5, 'v5')).toBe(list);
    expect(() => listSet(list, 70, 'x')).toThrow(RangeError);
  });

  it('matches a plain array under a seeded mix of pushes and sets', () => {
    const next = random(7);
    let list: PersistentList<number> = emptyList();
    const array: number[] = [];
    for (let step = 0; step < 2000; step++) {
      if (array.length === 0 || next() < 0.4) {
        array.push(step);
        list = listPush(list, step);
      } else {
        const index = Math.floor(next() * array.length);
        array[index] = -step;
        list = listSet(list, index, -step);
      }
    }
    expect(listItems(list)).toEqual(array);
  });
});

describe('PersistentMap', () => {
  it('finds every key set, keeps every older version as it was, and counts keys once', () => {
    const next = random(11);
    const plain = new Map<string, number>();
    const checkpoints: Array<[PersistentMap<number>, Map<string, number>]> = [];
    let map: PersistentMap<number> = emptyMap();
    for (let step = 0; step <= 3000; step++) {
      if (step % 250 === 0) checkpoints.push([map, new Map(plain)]);
      // Ids like the fold's: some repeated, some Object.prototype keys.
      const key =
        next() < 0.05 ? ['constructor', '__proto__', 'toString'][step % 3]! : `run-${Math.floor(next() * 1500)}`;
      map = deepFreeze(mapSet(map, key, step));
      plain.set(key, step);
    }
    checkpoints.push([map, plain]);
    for (const [version, expected] of checkpoints) {
      expect(version.size).toBe(expected.size);
      for (const [key, value] of expected) expect(mapGet(version, key)).toBe(value);
      expect(new Map(mapEntries(version))).toEqual(expected);
    }
    const last = map;
    expect(mapGet(last, 'run-never')).toBeUndefined();
    expect(mapSet(last, 'constructor', mapGet(last, 'constructor')!)).toBe(last);
  });
});
