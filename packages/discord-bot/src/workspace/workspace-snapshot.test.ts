import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { diffSnapshots } from './workspace-changes.js';
import { parseSnapshot, serializeSnapshot, takeSnapshot } from './workspace-snapshot.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ws-'));
  dirs.push(dir);
  return dir;
}

describe('takeSnapshot', () => {
  it('sees files, links (not followed) and what git obeys in .git, not its objects', () => {
    const dir = workspace();
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'a.txt'), 'one\ntwo\n');
    writeFileSync(join(dir, 'bin.dat'), Buffer.from([1, 0, 2]));
    symlinkSync('/etc/hostname', join(dir, 'link'));
    mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
    mkdirSync(join(dir, '.git', 'objects', 'ab'), { recursive: true });
    writeFileSync(join(dir, '.git', 'config'), '[core]\n');
    writeFileSync(join(dir, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\n');
    writeFileSync(join(dir, '.git', 'objects', 'ab', 'cdef'), 'blob');
    const snapshot = takeSnapshot(dir);
    expect(Object.keys(snapshot.entries).sort()).toEqual([
      '.git/config',
      '.git/hooks/pre-commit',
      'bin.dat',
      'link',
      'src/a.txt',
    ]);
    expect(snapshot.entries['src/a.txt']!.text).toBe('one\ntwo\n');
    expect(snapshot.entries['bin.dat']!.text).toBeUndefined();
    expect(snapshot.entries.link).toMatchObject({ type: 'link', target: '/etc/hostname' });
    expect(parseSnapshot(serializeSnapshot(snapshot))).toEqual(snapshot);
    expect(takeSnapshot(join(dir, 'missing'))).toEqual({ entries: {}, truncated: false });
  });

  it('a change hidden by restoring size and mtime is still seen (ctime), and so is chmod', async () => {
    const dir = workspace();
    const path = join(dir, 'run.sh');
    writeFileSync(path, 'echo a\n');
    // A whole second, so setting it back is exact.
    utimesSync(path, 1_000_000, 1_000_000);
    const before = takeSnapshot(dir, { maxEntries: 10, maxTextBytes: 0, maxTotalTextBytes: 0 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(path, 'echo b\n');
    utimesSync(path, 1_000_000, 1_000_000);
    const after = takeSnapshot(dir, { maxEntries: 10, maxTextBytes: 0, maxTotalTextBytes: 0 });
    expect(after.entries['run.sh']!.mtimeMs).toBe(before.entries['run.sh']!.mtimeMs);
    expect(diffSnapshots(before, after).map((c) => c.path)).toEqual(['run.sh']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    chmodSync(path, 0o755);
    expect(diffSnapshots(after, takeSnapshot(dir))[0]).toMatchObject({
      path: 'run.sh',
      note: expect.stringContaining('executable'),
    });
  });

  it('past maxEntries it says it is truncated', () => {
    const dir = workspace();
    for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, name), name);
    expect(takeSnapshot(dir, { maxEntries: 2, maxTextBytes: 10, maxTotalTextBytes: 10 }).truncated).toBe(true);
    expect(takeSnapshot(dir, { maxEntries: 3, maxTextBytes: 10, maxTotalTextBytes: 10 }).truncated).toBe(false);
  });
});
