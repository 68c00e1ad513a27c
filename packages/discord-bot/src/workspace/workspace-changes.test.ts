import { describe, expect, it } from 'vitest';
import {
  describeChanges,
  diffSnapshots,
  EMPTY_SNAPSHOT,
  lineChanges,
  type Snapshot,
  type SnapshotEntry,
} from './workspace-changes.js';

const file = (text: string | undefined, extra: Partial<SnapshotEntry> = {}): SnapshotEntry => ({
  type: 'file',
  size: text?.length ?? 100,
  mode: 0o644,
  ino: 1,
  mtimeMs: 1,
  ctimeMs: 1,
  ...(text === undefined ? {} : { text }),
  ...extra,
});
const snap = (entries: Record<string, SnapshotEntry>, truncated = false): Snapshot => ({ entries, truncated });

describe('lineChanges', () => {
  it.each([
    ['', '', 0, 0],
    ['', 'a\nb\n', 2, 0],
    ['a\nb\n', '', 0, 2],
    ['a\nb\nc\n', 'a\nB\nc\n', 1, 1],
    ['a\nb\nc\n', 'a\nb\nc\nd\n', 1, 0],
    ['a\nb\nc', 'a\nb\nc\n', 0, 0],
    ['x\na\nb\n', 'a\nb\nx\n', 0, 0],
    ['a\na\n', 'a\n', 0, 1],
  ])('%j -> %j: +%i -%i', (before, after, added, removed) => {
    expect(lineChanges(before, after)).toEqual({ added, removed });
  });
});

describe('diffSnapshots', () => {
  it.each<[string, Snapshot, Snapshot, unknown[]]>([
    ['nothing changed', snap({ a: file('x\n') }), snap({ a: file('x\n') }), []],
    [
      'a new text file',
      EMPTY_SNAPSHOT,
      snap({ a: file('1\n2\n') }),
      [{ path: 'a', kind: 'added', lines: { added: 2, removed: 0 } }],
    ],
    [
      'a new executable',
      EMPTY_SNAPSHOT,
      snap({ 'run.sh': file('x\n', { mode: 0o755 }) }),
      [{ path: 'run.sh', kind: 'added', lines: { added: 1, removed: 0 }, note: 'executable' }],
    ],
    [
      'a deleted file',
      snap({ a: file('1\n') }),
      EMPTY_SNAPSHOT,
      [{ path: 'a', kind: 'removed', lines: { added: 0, removed: 1 } }],
    ],
    [
      'an edit',
      snap({ a: file('1\n2\n') }),
      snap({ a: file('1\n3\n', { mtimeMs: 2, ctimeMs: 2 }) }),
      [{ path: 'a', kind: 'changed', lines: { added: 1, removed: 1 } }],
    ],
    // Same size and mtime set back with `touch -d`: the ctime (which no program can set back) still moved.
    [
      'same bytes count and mtime, new ctime',
      snap({ a: file(undefined, { size: 9 }) }),
      snap({ a: file(undefined, { size: 9, ctimeMs: 5 }) }),
      [{ path: 'a', kind: 'changed', note: '9 → 9 bytes' }],
    ],
    [
      'chmod +x only',
      snap({ a: file('x\n') }),
      snap({ a: file('x\n', { mode: 0o755, ctimeMs: 2 }) }),
      [{ path: 'a', kind: 'changed', lines: { added: 0, removed: 0 }, note: 'executable' }],
    ],
    [
      'a file replaced by a link',
      snap({ a: file('x\n') }),
      snap({ a: file(undefined, { type: 'link', target: '/etc/passwd' }) }),
      [{ path: 'a', kind: 'changed', note: 'now a link' }],
    ],
    [
      'a binary file',
      EMPTY_SNAPSHOT,
      snap({ 'a.bin': file(undefined, { size: 300 }) }),
      [{ path: 'a.bin', kind: 'added', note: '300 bytes' }],
    ],
  ])('%s', (_, before, after, expected) => {
    expect(diffSnapshots(before, after)).toEqual(expected);
  });
});

describe('describeChanges', () => {
  it('one line each, a path cannot break out of its code span, long lists are cut, truncation is said', () => {
    const text = describeChanges(
      [
        { path: 'build.sh', kind: 'added', lines: { added: 2, removed: 0 }, note: 'executable' },
        { path: 'a`b\n@everyone', kind: 'changed', lines: { added: 1, removed: 3 } },
        { path: 'gone', kind: 'removed' },
      ],
      true,
      2,
    );
    expect(text.split('\n')).toEqual([
      '• `build.sh` new +2 −0 (executable)',
      '• `aˋb�@everyone` changed +1 −3',
      '…and 1 more',
      '…and the workspace holds more files than can be compared, so there may be other changes',
    ]);
  });
});
