export interface DiffLine {
  readonly kind: 'same' | 'add' | 'del';
  readonly text: string;
}

export interface LineDiff {
  readonly lines: readonly DiffLine[];
  readonly added: number;
  readonly removed: number;
}

/** Past this many cells the table is not built: the old lines are shown removed and the new ones added. */
const MAX_CELLS = 2_000_000;

const splitLines = (text: string): string[] => (text === '' ? [] : text.replace(/\r\n/g, '\n').split('\n'));

/**
 * A line diff of `before` → `after` (an Edit's `old_string` → `new_string`), by longest common
 * subsequence, removals before additions within a change, as GitHub lays a unified diff out.
 */
export function lineDiff(before: string, after: string): LineDiff {
  const a = splitLines(before);
  const b = splitLines(after);
  // Common head and tail first: an edit usually changes a few lines in the middle.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail += 1;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const lines: DiffLine[] = a.slice(0, head).map((text) => ({ kind: 'same', text }));
  lines.push(...middle(midA, midB));
  lines.push(...a.slice(a.length - tail).map((text) => ({ kind: 'same' as const, text })));
  return {
    lines,
    added: lines.filter((l) => l.kind === 'add').length,
    removed: lines.filter((l) => l.kind === 'del').length,
  };
}

function middle(a: readonly string[], b: readonly string[]): DiffLine[] {
  const del = (text: string): DiffLine => ({ kind: 'del', text });
  const add = (text: string): DiffLine => ({ kind: 'add', text });
  if (a.length === 0 || b.length === 0 || (a.length + 1) * (b.length + 1) > MAX_CELLS) {
    return [...a.map(del), ...b.map(add)];
  }
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? lcs[(i + 1) * width + j + 1]! + 1
          : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let pendingAdds: DiffLine[] = [];
  let i = 0;
  let j = 0;
  const flush = () => {
    out.push(...pendingAdds);
    pendingAdds = [];
  };
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      flush();
      out.push({ kind: 'same', text: a[i]! });
      i += 1;
      j += 1;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) {
      out.push(del(a[i]!));
      i += 1;
    } else {
      pendingAdds.push(add(b[j]!));
      j += 1;
    }
  }
  while (i < a.length) out.push(del(a[i++]!));
  flush();
  while (j < b.length) out.push(add(b[j++]!));
  return out;
}

/** Every line of `text` as added: a new file (Write). */
export function allAdded(text: string): LineDiff {
  const lines = splitLines(text.replace(/\n$/, '')).map((t): DiffLine => ({ kind: 'add', text: t }));
  return { lines, added: lines.length, removed: 0 };
}
