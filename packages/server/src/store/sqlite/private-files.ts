import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

/**
 * The server's files hold every thread and every token's hash: whatever the process's umask,
 * only their owner may read them. A folder made here is 0700; the database and its `-wal` and
 * `-shm` are 0600 (SQLite gives those two the database file's own mode when it makes them).
 */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Opens the SQLite database in the file `path`, making it 0600 first (and an older one, and its -wal and -shm, 0600). */
export function openPrivateDatabase(path: string): Database.Database {
  if (path !== '' && path !== ':memory:' && !path.startsWith('file:')) {
    closeSync(openSync(path, 'a', 0o600));
    for (const file of [path, `${path}-wal`, `${path}-shm`]) keepPrivate(file);
  }
  return new Database(path);
}

/** Takes group and other access away from `file`, if it exists and has any. */
function keepPrivate(file: string): void {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return;
  }
  if ((mode & 0o077) === 0) return;
  try {
    chmodSync(file, mode & 0o700);
  } catch (error) {
    // Someone else's database this process may still open (an operator's command as another user): leave it.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
}
