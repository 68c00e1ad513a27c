import { describe, expect, it } from 'vitest';
import {
  isInside,
  isolationOptions,
  isolationSettings,
  privatePathTouched,
  spareIsolationGap,
  spareIsolationOptions,
} from './tool-sandbox.js';

describe('isInside', () => {
  it.each<[string, string, boolean]>([
    ['/a/b', '/a/b', true],
    ['/a/b/c', '/a/b', true],
    ['/a/bc', '/a/b', false],
    ['/a', '/a/b', false],
    ['/x/../a/b/c', '/a/b', true],
    ['/a/b/..hidden', '/a/b', true],
    ['/a/b/../c', '/a/b', false],
  ])('%s in %s -> %s', (path, dir, inside) => {
    expect(isInside(path, dir)).toBe(inside);
  });
});

describe('privatePathTouched', () => {
  const options = { cwd: '/bot/ws/th_a', privatePaths: ['/bot/ws', '/bot/claude', '/bot/scuba.json'] };
  it.each<[string, Record<string, unknown>, string | undefined, string | undefined]>([
    ['a file in the workspace', { file_path: '/bot/ws/th_a/notes.md' }, undefined, undefined],
    ['a relative file in the workspace', { file_path: 'notes.md' }, undefined, undefined],
    ["another thread's workspace", { file_path: '/bot/ws/th_b/secret.txt' }, undefined, '/bot/ws/th_b/secret.txt'],
    ['a way out with ..', { file_path: '../th_b/secret.txt' }, undefined, '/bot/ws/th_b/secret.txt'],
    ['the config file', { file_path: '/bot/scuba.json' }, undefined, '/bot/scuba.json'],
    ["a Glob rooted at the CLI's home", { pattern: '**/*.jsonl', path: '/bot/claude' }, undefined, '/bot/claude'],
    [
      'a link in the workspace leading out (blockedPath)',
      { file_path: '/bot/ws/th_a/link' },
      '/bot/ws/th_b/secret.txt',
      '/bot/ws/th_b/secret.txt',
    ],
    ['a path outside every private one', { file_path: '/etc/hostname' }, undefined, undefined],
    ['a dot-named file right in a private folder', { file_path: '/bot/ws/..secret' }, undefined, '/bot/ws/..secret'],
    ['a Bash command (no path field)', { command: 'cat /bot/scuba.json' }, undefined, undefined],
  ])('%s', (_name, input, blockedPath, expected) => {
    expect(privatePathTouched(input, { ...options, blockedPath })).toBe(expected);
  });
});

describe('isolationOptions', () => {
  it('off adds nothing; unavailable takes every built-in tool away', () => {
    expect(isolationOptions({ kind: 'off' }, '/ws')).toEqual({});
    expect(isolationOptions({ kind: 'unavailable', reason: 'no bwrap' }, '/ws')).toEqual({ tools: [] });
  });

  it('sandbox: private paths that hold the workspace are re-opened for it, and are no deny rule', () => {
    const options = isolationOptions(
      { kind: 'sandbox', privatePaths: ['/home/me', '/home/me/bot/ws', '/home/me/bot/state.db'] },
      '/home/me/bot/ws/th_a',
    );
    expect(options.sandbox?.filesystem).toEqual({
      denyRead: ['/home/me', '/home/me/bot/state.db', '/home/me/bot/ws'],
      allowRead: ['/home/me/bot/ws/th_a'],
    });
    const deny = (options.settings as { permissions: { deny: string[] } }).permissions.deny;
    expect(deny).toEqual([
      'Read(//home/me/bot/state.db/**)',
      'Read(//home/me/bot/state.db)',
      'Edit(//home/me/bot/state.db/**)',
      'Edit(//home/me/bot/state.db)',
      'Read(//proc/**)',
    ]);
  });
});

describe('the isolation of a spare CLI', () => {
  const isolation = { kind: 'sandbox', privatePaths: ['/bot/ws', '/bot/claude', '/bot/tmp'] } as const;
  const spare = spareIsolationOptions(isolation, '/bot/ws', '/bot/tmp/.spare-1');

  it('holds only what every workspace under the root shares, and no workspace', () => {
    expect(spare.sandbox?.filesystem).toEqual({ denyRead: ['/bot/claude', '/bot/tmp', '/bot/ws'], allowRead: [] });
    const thread = isolationOptions(isolation, '/bot/ws/th_1', '/bot/tmp/.spare-1');
    expect(spareIsolationGap(spare, thread)).toBeUndefined();
    expect(isolationSettings(isolation, '/bot/ws/th_1', '/bot/tmp/.spare-1')).toEqual({
      sandbox: thread.sandbox,
      permissions: (thread.settings as { permissions: unknown }).permissions,
    });
  });

  it('cannot serve a thread that may read what it denies, or a different sandbox', () => {
    const elsewhere = isolationOptions(
      { ...isolation, privatePaths: ['/bot/ws', '/bot/tmp'] },
      '/bot/claude/ws',
      undefined,
    );
    expect(spareIsolationGap(spare, elsewhere)).toBe('it denies /bot/claude, which the thread may read');
    expect(spareIsolationGap(spare, isolationOptions({ kind: 'off' }, '/bot/ws/th_1'))).toBe(
      'its sandbox differs from the thread’s',
    );
  });
});
