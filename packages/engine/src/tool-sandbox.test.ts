import { describe, expect, it } from 'vitest';
import {
  isInside,
  isolationOptions,
  isolationSettings,
  privatePathTouched,
  spareIsolationGap,
  spareIsolationOptions,
  SYSTEM_READ_PATHS,
  SYSTEM_SECRET_PATHS,
  toolchainReadPaths,
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
      denyRead: ['/', ...SYSTEM_SECRET_PATHS, '/home/me', '/home/me/bot/state.db', '/home/me/bot/ws'].sort(),
      allowRead: [...SYSTEM_READ_PATHS, '/home/me/bot/ws/th_a'].sort(),
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

describe('what sandboxed commands may read', () => {
  it.each<[string, string[] | undefined, string[], string[]]>([
    ['nothing more than the system folders and the workspace', undefined, [], []],
    [
      'the toolchains and an extra folder',
      ['/usr/local/bin', '/opt/node', '/srv/data'],
      ['/opt/node', '/srv/data'],
      [],
    ],
    // A PATH entry inside the bot's home would re-open it: allowRead wins over a denial around it.
    ['never a folder inside a private path', ['/home/me/.local/bin', '/home/me', '/bot/ws/th_b'], [], []],
    ['never / itself', ['/', '//'], [], []],
    // A private path inside an opened folder stays denied: the more specific path wins (measured, README).
    ['a private path inside an opened folder is still denied', ['/srv'], ['/srv'], ['/srv/bot.env']],
  ])('%s', (_name, readPaths, opened, denied) => {
    const options = isolationOptions(
      { kind: 'sandbox', privatePaths: ['/home/me', '/bot/ws', '/srv/bot.env'], ...(readPaths ? { readPaths } : {}) },
      '/bot/ws/th_a',
    );
    const { allowRead = [], denyRead = [] } = options.sandbox?.filesystem ?? {};
    expect(allowRead).toEqual([...new Set([...SYSTEM_READ_PATHS, ...opened, '/bot/ws/th_a'])].sort());
    expect(denyRead).toEqual(
      ['/', ...SYSTEM_SECRET_PATHS, '/bot/ws', '/home/me', '/srv/bot.env', ...denied]
        .sort()
        .filter((p, i, all) => all.indexOf(p) === i),
    );
  });

  it.each<[string, string, string, string[]]>([
    [
      'a system PATH and Node in /usr',
      '/usr/local/bin:/usr/bin:/bin',
      '/usr/bin/node',
      ['/usr/local/bin', '/usr/bin', '/bin', '/usr'],
    ],
    [
      'Node from nvm: its whole installation',
      '/usr/bin',
      '/root/.nvm/versions/node/v20.20.0/bin/node',
      ['/usr/bin', '/root/.nvm/versions/node/v20.20.0'],
    ],
    [
      'relative, empty and trailing-slash entries',
      '.::bin:/opt/tools/bin/:/',
      '/opt/node/node',
      ['/opt/tools/bin', '/opt/node'],
    ],
  ])('toolchains: %s', (_name, childPath, execPath, expected) => {
    expect(toolchainReadPaths(childPath, execPath)).toEqual(expected);
  });
});

describe('the isolation of a spare CLI', () => {
  const isolation = { kind: 'sandbox', privatePaths: ['/bot/ws', '/bot/claude', '/bot/tmp'] } as const;
  const spare = spareIsolationOptions(isolation, '/bot/ws', '/bot/tmp/.spare-1');

  it('holds only what every workspace under the root shares, and no workspace', () => {
    expect(spare.sandbox?.filesystem).toEqual({
      denyRead: ['/', ...SYSTEM_SECRET_PATHS, '/bot/claude', '/bot/tmp', '/bot/ws'].sort(),
      allowRead: [...SYSTEM_READ_PATHS].sort(),
    });
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
    const opensMore = spareIsolationOptions({ ...isolation, readPaths: ['/srv/data'] }, '/bot/ws', '/bot/tmp/.spare-1');
    expect(spareIsolationGap(opensMore, isolationOptions(isolation, '/bot/ws/th_1', '/bot/tmp/.spare-1'))).toBe(
      'it may read /srv/data, which the thread may not',
    );
    expect(spareIsolationGap(spare, isolationOptions({ kind: 'off' }, '/bot/ws/th_1'))).toBe(
      'its sandbox differs from the thread’s',
    );
  });
});
