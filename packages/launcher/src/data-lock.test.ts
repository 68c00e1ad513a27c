import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDataLock, DataFolderInUse } from './data-lock.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const setup = () => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-lock-'));
  return join(dir, 'launcher.lock');
};

/** The pid of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('acquireDataLock', () => {
  it('refuses a second holder while the first lives, naming its pid and address, and frees on release', () => {
    const path = setup();
    const first = acquireDataLock(path, '/srv/data');
    expect(first.tookOverFrom).toBeUndefined();
    first.setUrl('http://127.0.0.1:7777');
    let refused: unknown;
    try {
      acquireDataLock(path, '/srv/data');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DataFolderInUse);
    expect((refused as DataFolderInUse).pid).toBe(process.pid);
    expect((refused as Error).message).toBe(
      `another Bubble (pid ${process.pid}, http://127.0.0.1:7777) is running on the data folder /srv/data; stop it first (kill ${process.pid}), or start this one with another --data folder`,
    );
    first.release();
    expect(existsSync(path)).toBe(false);
    const second = acquireDataLock(path, '/srv/data');
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    second.release();
  });

  it('takes over a lock whose process is gone, or whose pid now belongs to another process', () => {
    const path = setup();
    const gone = deadPid();
    writeFileSync(path, JSON.stringify({ pid: gone, startTime: null, nonce: 'old', acquiredAt: 'then' }));
    const lock = acquireDataLock(path, '/srv/data');
    expect(lock.tookOverFrom).toBe(gone);
    lock.release();
    // This very pid, but started at another time: a pid reused after a crash.
    writeFileSync(path, JSON.stringify({ pid: process.pid, startTime: '1', nonce: 'old', acquiredAt: 'then' }));
    const again = acquireDataLock(path, '/srv/data');
    expect(again.tookOverFrom).toBe(process.pid);
    again.release();
  });

  it('leaves alone a file it did not write, and a lock that is no longer its own', () => {
    const path = setup();
    writeFileSync(path, 'something else');
    expect(() => acquireDataLock(path, '/srv/data')).toThrow(/is not a lock this launcher wrote; move it away/);
    expect(readFileSync(path, 'utf8')).toBe('something else');
    rmSync(path);
    const lock = acquireDataLock(path, '/srv/data');
    writeFileSync(path, JSON.stringify({ pid: process.pid, startTime: null, nonce: 'another', acquiredAt: 'now' }));
    lock.release();
    expect(JSON.parse(readFileSync(path, 'utf8')).nonce).toBe('another');
  });
});
