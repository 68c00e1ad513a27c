import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * One `npm start` per data folder. Two launchers on one folder would share a
 * database and fight over the bot's config (the second rewrote it to its own
 * port and exited, and the first one's bot could not restart), so the first
 * takes a lock file and the second is refused before it changes anything.
 *
 * The lock names its process (pid, and on Linux the kernel's start time of
 * that pid, so a pid reused by another program after a crash does not count).
 * A lock whose process is gone is stale and is taken over. The file appears
 * whole (written aside, then hard-linked into place, which fails if a lock is
 * there), so nobody reads half a lock. Two launchers taking over the same stale
 * lock at the very same moment can both win; a person starting two at once
 * on a crashed folder is rare enough to leave at that.
 */

const LockSchema = z.object({
  pid: z.number().int().positive(),
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot), when readable. */
  startTime: z.string().nullable(),
  nonce: z.string(),
  acquiredAt: z.string(),
  /** Where that launcher serves, once it knows. */
  url: z.string().optional(),
});
type LockFile = z.infer<typeof LockSchema>;

/** The data folder is in use by another live launcher. */
export class DataFolderInUse extends Error {
  override readonly name = 'DataFolderInUse';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly url: string | undefined,
  ) {
    super(
      `another Bubble (pid ${pid}${url === undefined ? '' : `, ${url}`}) is running on the data folder ${dataDir}; ` +
        `stop it first (kill ${pid}), or start this one with another --data folder`,
    );
  }
}

export interface DataLock {
  readonly path: string;
  /** The pid of the launcher whose stale lock this one took over, if it did. */
  readonly tookOverFrom: number | undefined;
  /** Records where this launcher serves, for the message a second one prints. */
  setUrl(url: string): void;
  /** Removes the lock if it is still ours. */
  release(): void;
}

/** The kernel's start time of a process, or null where /proc is not there. */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(lock: LockFile): boolean {
  try {
    process.kill(lock.pid, 0);
  } catch (error) {
    // EPERM: it exists, under another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (lock.startTime === null) return true;
  const now = processStartTime(lock.pid);
  return now === null || now === lock.startTime;
}

function readLock(path: string): LockFile | 'unreadable' | 'missing' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  try {
    const parsed = LockSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function writeAside(path: string, lock: LockFile): string {
  const temp = `${path}.${lock.nonce}.tmp`;
  writeFileSync(temp, `${JSON.stringify(lock)}\n`, { mode: 0o600 });
  return temp;
}

/**
 * Takes the lock at `path` (a file in the data folder) for this process, or
 * throws `DataFolderInUse` naming the launcher that holds it.
 */
export function acquireDataLock(path: string, dataDir: string): DataLock {
  const mine: LockFile = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    nonce: randomBytes(8).toString('hex'),
    acquiredAt: new Date().toISOString(),
  };
  let tookOverFrom: number | undefined;
  for (let attempt = 0; ; attempt++) {
    const temp = writeAside(path, mine);
    try {
      linkSync(temp, path);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
    } finally {
      unlinkSync(temp);
    }
    const held = readLock(path);
    if (held === 'missing') continue;
    // A lock file that is not ours to read is not ours to remove either.
    if (held === 'unreadable') throw new Error(`${path} is not a lock this launcher wrote; move it away to start`);
    if (isAlive(held)) throw new DataFolderInUse(dataDir, held.pid, held.url);
    tookOverFrom = held.pid;
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  const stillMine = (): boolean => {
    const held = readLock(path);
    return typeof held === 'object' && held.nonce === mine.nonce;
  };
  return {
    path,
    tookOverFrom,
    setUrl(url) {
      if (!stillMine()) return;
      renameSync(writeAside(path, { ...mine, url }), path);
    },
    release() {
      if (stillMine()) unlinkSync(path);
    },
  };
}
