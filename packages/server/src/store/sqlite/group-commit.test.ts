import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { GroupCommit } from './group-commit.js';

let dir: string;
let db: Database.Database;
let published: LiveBusMessage[][];
let gc: GroupCommit;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-gc-'));
  db = new Database(join(dir, 'x.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  published = [];
  gc = new GroupCommit(db, (m) => published.push(m));
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

const insert = (k: string) => () => {
  db.prepare('INSERT INTO t (k) VALUES (?)').run(k);
  return k;
};
const rows = () => (db.prepare('SELECT k FROM t ORDER BY k').all() as Array<{ k: string }>).map((r) => r.k);
const msg = (id: string): LiveBusMessage => ({ kind: 'tokens_revoked', principalId: id, tokenIds: [] });

describe('GroupCommit', () => {
  it('commits jobs queued in the same tick in one transaction, isolating a failing job', async () => {
    const results = await Promise.allSettled([
      gc.enqueue((emit) => {
        emit(msg('a'));
        return insert('a')();
      }),
      gc.enqueue((emit) => {
        emit(msg('dup'));
        insert('b')();
        insert('a')(); // primary key violation: this job alone is rolled back
        return 'never';
      }),
      gc.enqueue(insert('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(rows()).toEqual(['a', 'c']);
    // one group, and only the committed job's messages, published once
    expect(published).toEqual([[msg('a')]]);
  });

  it('runs each job of a group without a failure once, and a group with one again in isolation', async () => {
    const runs: string[] = [];
    const counted = (k: string) => () => {
      runs.push(k);
      return insert(k)();
    };
    await Promise.all([gc.enqueue(counted('p')), gc.enqueue(counted('q'))]);
    expect(runs).toEqual(['p', 'q']);
    runs.length = 0;
    const results = await Promise.allSettled([
      gc.enqueue(counted('r')),
      gc.enqueue(counted('p')),
      gc.enqueue(counted('s')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // the optimistic attempt stops at the duplicate; the isolated run then does every job once
    expect(runs).toEqual(['r', 'p', 'r', 'p', 's']);
    expect(rows()).toEqual(['p', 'q', 'r', 's']);
  });

  it('refuses the whole group, without crashing, when the database fails', async () => {
    const other = new Database(join(dir, 'x.db'));
    other.pragma('busy_timeout = 0');
    db.pragma('busy_timeout = 0');
    other.exec('BEGIN IMMEDIATE');
    try {
      const results = await Promise.allSettled([gc.enqueue(insert('x')), gc.enqueue(insert('y'))]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(await gc.enqueue(insert('z'))).toBe('z');
    expect(rows()).toEqual(['z']);
  });

  it('resolves drained() once the queue is empty', async () => {
    const done = gc.enqueue(insert('q'));
    await gc.drained();
    expect(rows()).toEqual(['q']);
    await done;
  });
});
