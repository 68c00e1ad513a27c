import { describe, expect, it } from 'vitest';
import { allAdded, lineDiff } from './line-diff';

const show = (before: string, after: string) =>
  lineDiff(before, after).lines.map((l) => `${l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}${l.text}`);

describe('lineDiff', () => {
  it('keeps common lines and counts what changed', () => {
    const diff = lineDiff('a\nb\nc', 'a\nB\nc\nd');
    expect(diff.lines.map((l) => [l.kind, l.text])).toEqual([
      ['same', 'a'],
      ['del', 'b'],
      ['add', 'B'],
      ['same', 'c'],
      ['add', 'd'],
    ]);
    expect([diff.added, diff.removed]).toEqual([2, 1]);
  });

  it('puts removals before additions inside one change', () => {
    expect(show('x\none\ntwo\ny', 'x\n1\n2\ny')).toEqual([' x', '-one', '-two', '+1', '+2', ' y']);
  });

  it('finds an insertion in the middle of repeated lines', () => {
    expect(show('}\n}\n}', '}\n}\nnew\n}')).toEqual([' }', ' }', '+new', ' }']);
  });

  it('handles empty sides and identical text', () => {
    expect(show('', 'a\nb')).toEqual(['+a', '+b']);
    expect(show('a\nb', '')).toEqual(['-a', '-b']);
    expect(lineDiff('same\ntext', 'same\ntext')).toMatchObject({ added: 0, removed: 0 });
    expect(show('a\r\nb', 'a\nc')).toEqual([' a', '-b', '+c']);
  });

  it('shows every line of a new file as added', () => {
    expect(allAdded('one\ntwo\n')).toMatchObject({ added: 2, removed: 0 });
  });
});
