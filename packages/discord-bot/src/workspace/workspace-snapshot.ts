import { closeSync, constants, lstatSync, openSync, readdirSync, readlinkSync, readSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Snapshot, SnapshotEntry } from './workspace-changes.js';

export interface SnapshotLimits {
  /** Files and links looked at; beyond, the snapshot says it is truncated. */
  maxEntries: number;
  /** A text file up to this size keeps its content (for +/- counts). */
  maxTextBytes: number;
  /** All kept text together. */
  maxTotalTextBytes: number;
}

export const DEFAULT_SNAPSHOT_LIMITS: SnapshotLimits = {
  maxEntries: 20_000,
  maxTextBytes: 128 * 1024,
  maxTotalTextBytes: 4 * 1024 * 1024,
};

/**
 * Inside `.git` only what git runs or obeys is looked at (its config, hooks
 * and info); its objects, refs and logs change with every commit and run nothing.
 */
const GIT_KEPT = new Set(['config', 'hooks', 'info']);

/** Every file and link under `root` (links not followed), with `lstat`'s facts and small text files' content. */
export function takeSnapshot(root: string, limits: SnapshotLimits = DEFAULT_SNAPSHOT_LIMITS): Snapshot {
  const entries: Record<string, SnapshotEntry> = {};
  let count = 0;
  let textBytes = 0;
  let truncated = false;
  const walk = (dir: string, prefix: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (truncated) return;
      if (prefix === '.git/' && !GIT_KEPT.has(name)) continue;
      const path = `${prefix}${name}`;
      const full = join(dir, name);
      let stat: Stats;
      try {
        stat = lstatSync(full);
      } catch {
        continue;
      }
      if (stat.isDirectory()) {
        walk(full, `${path}/`);
        continue;
      }
      if (++count > limits.maxEntries) {
        truncated = true;
        return;
      }
      const entry: SnapshotEntry = {
        type: stat.isFile() ? 'file' : stat.isSymbolicLink() ? 'link' : 'other',
        size: stat.size,
        mode: stat.mode & 0o7777,
        ino: stat.ino,
        mtimeMs: stat.mtimeMs,
        ctimeMs: stat.ctimeMs,
      };
      if (entry.type === 'link') {
        try {
          entry.target = readlinkSync(full);
        } catch {
          entry.target = '?';
        }
      } else if (
        entry.type === 'file' &&
        stat.size <= limits.maxTextBytes &&
        textBytes + stat.size <= limits.maxTotalTextBytes
      ) {
        const text = readText(full, stat.size);
        if (text !== undefined) {
          entry.text = text;
          textBytes += stat.size;
        }
      }
      entries[path] = entry;
    }
  };
  walk(root, '');
  return { entries, truncated };
}

/** A file's content if it is text (no NUL byte); undefined otherwise or when it cannot be read. */
function readText(path: string, size: number): string | undefined {
  let fd: number | undefined;
  try {
    // Never follows a link and never waits: a file swapped for a FIFO since lstat does not hang the bot.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, 0);
    const bytes = buffer.subarray(0, read);
    return bytes.includes(0) ? undefined : bytes.toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function serializeSnapshot(snapshot: Snapshot): Buffer {
  return gzipSync(JSON.stringify(snapshot));
}

export function parseSnapshot(data: Buffer): Snapshot {
  return JSON.parse(gunzipSync(data).toString('utf8')) as Snapshot;
}
