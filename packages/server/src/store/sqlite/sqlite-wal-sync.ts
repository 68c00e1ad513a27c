import { closeSync, fdatasync, openSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import type { DurableSync } from '../store.js';

export interface WalSync {
  sync: DurableSync;
  close(): void;
}

/**
 * Makes the store's commits durable off the event loop. The connection goes to
 * `synchronous = NORMAL`: in WAL mode a COMMIT then writes its frames to the WAL file and
 * returns without waiting for the disk (the database stays consistent whatever happens; only
 * the last commits could roll back on a power cut, never on a crash of this process, whose
 * writes the kernel already holds). `sync` then runs `fdatasync` on that WAL file in libuv's
 * thread pool, and a write is answered, and its events published, only once it has
 * (`group-commit.ts`): durable as with `synchronous = FULL`, which made every COMMIT wait for
 * the disk on the event loop (a quarter of it at 1,000 commits/s, and all of it while the disk
 * stalled). SQLite keeps the WAL file (same inode, reset in place after a checkpoint) while a
 * connection is open and `journal_size_limit` is unset, so one descriptor serves the store's
 * life. Checkpoints still sync the WAL and the database file themselves.
 *
 * Null, with the connection left at FULL, for a database without a WAL file (in memory).
 */
export function openWalForSync(db: Database, path: string): WalSync | null {
  if (db.memory || path === '' || path === ':memory:') return null;
  let fd: number;
  try {
    fd = openSync(`${path}-wal`, 'r+');
  } catch {
    return null;
  }
  db.pragma('synchronous = NORMAL');
  return {
    sync: (done) => fdatasync(fd, (error) => done(error ?? null)),
    close: () => closeSync(fd),
  };
}
