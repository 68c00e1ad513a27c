import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeSandbox } from './probe-sandbox.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A PATH folder holding links to the named binaries only. */
function pathWith(...names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'probe-path-'));
  dirs.push(dir);
  for (const name of names) symlinkSync(`/usr/bin/${name}`, join(dir, name));
  return dir;
}

describe('probeSandbox (real bubblewrap)', () => {
  it('finds bwrap and socat and starts a namespace', async () => {
    expect(await probeSandbox('/usr/local/bin:/usr/bin:/bin')).toEqual({ ok: true, bwrap: '/usr/bin/bwrap' });
  });

  it('says what is missing from PATH', async () => {
    expect(await probeSandbox(pathWith('socat'))).toEqual({
      ok: false,
      reason: "bwrap is not on PATH (install Debian's bubblewrap and socat packages)",
    });
    expect(await probeSandbox(pathWith('bwrap'))).toEqual({
      ok: false,
      reason: "socat is not on PATH (install Debian's bubblewrap and socat packages)",
    });
    expect(await probeSandbox('')).toEqual({
      ok: false,
      reason: "bwrap and socat are not on PATH (install Debian's bubblewrap and socat packages)",
    });
  });

  it('refuses other platforms', async () => {
    expect(await probeSandbox('/usr/bin', { platform: 'darwin' })).toEqual({
      ok: false,
      reason: 'the sandbox is set up for Linux (bubblewrap) only; this is darwin',
    });
  });
});
