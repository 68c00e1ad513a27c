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
 * stalled). SQLite deletes the WAL file only when the last connection to the database closes or
 * the journal mode leaves WAL (which needs an exclusive lock, refused while this connection is
 * open); checkpoints reset and truncate it in place. So one descriptor, opened on the file SQLite
 * itself names (`PRAGMA database_list`, symlinks resolved), serves the store's life. Automatic
 * checkpoints still sync the WAL and the database file themselves, on the event loop.
 *
 * Null, with the connection left at FULL (every COMMIT syncing), where no WAL file can be opened:
 * a database in memory, or a file SQLite has not given one.
 */
export function openWalForSync(db: Database): WalSync | null {
  if (db.memory) return null;
  const main = (db.pragma('database_list') as Array<{ name: string; file: string }>).find((d) => d.name === 'main');
  if (main === undefined || main.file === '') return null;
  let fd: number;
  try {
    fd = openSync(`${main.file}-wal`, 'r+');
  } catch {
    return null;
  }
  try {
    db.pragma('synchronous = NORMAL');
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return {
    sync: (done) => fdatasync(fd, (error) => done(error ?? null)),
    close: () => closeSync(fd),
  };
}
