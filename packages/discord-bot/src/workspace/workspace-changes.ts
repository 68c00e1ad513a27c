/**
 * What changed in a shared workspace between two snapshots (issue 28 §3):
 * before an agentic turn, the files other people's turns changed since this
 * sender's last turn are listed, and run only once the sender agrees. Pure.
 */

/** One entry of a snapshot: what `lstat` says, and a small text file's content (for +/- line counts). */
export interface SnapshotEntry {
  type: 'file' | 'link' | 'other';
  size: number;
  mode: number;
  ino: number;
  mtimeMs: number;
  /** Changed by the kernel on every write or chmod; no program can set it back. */
  ctimeMs: number;
  /** A symlink's target. */
  target?: string;
  /** A text file's content, when small enough to keep. */
  text?: string;
}

export interface Snapshot {
  entries: Record<string, SnapshotEntry>;
  /** More files than a snapshot takes: whatever lies beyond was not compared. */
  truncated: boolean;
}

export const EMPTY_SNAPSHOT: Snapshot = { entries: {}, truncated: false };

export interface WorkspaceChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  /** Lines added and removed, when both sides' text is known. */
  lines?: { added: number; removed: number };
  /** What else is worth saying: a mode change, a link's target, a binary or large file. */
  note?: string;
}

/** Every path whose entry differs, sorted by path. */
export function diffSnapshots(before: Snapshot, after: Snapshot): WorkspaceChange[] {
  const paths = new Set([...Object.keys(before.entries), ...Object.keys(after.entries)]);
  const changes: WorkspaceChange[] = [];
  for (const path of [...paths].sort()) {
    const old = before.entries[path];
    const now = after.entries[path];
    if (old === undefined && now !== undefined) changes.push(added(path, now));
    else if (old !== undefined && now === undefined) changes.push(removed(path, old));
    else if (old !== undefined && now !== undefined && !sameEntry(old, now)) changes.push(changed(path, old, now));
  }
  return changes;
}

function sameEntry(a: SnapshotEntry, b: SnapshotEntry): boolean {
  return (
    a.type === b.type &&
    a.size === b.size &&
    a.mode === b.mode &&
    a.ino === b.ino &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs &&
    a.target === b.target &&
    a.text === b.text
  );
}

function added(path: string, now: SnapshotEntry): WorkspaceChange {
  if (now.type === 'link') return { path, kind: 'added', note: `a link to ${now.target ?? '?'}` };
  if (now.text !== undefined)
    return { path, kind: 'added', lines: { added: lineCount(now.text), removed: 0 }, ...exec(undefined, now) };
  return { path, kind: 'added', note: joinNotes(`${now.size} bytes`, exec(undefined, now).note) };
}

function removed(path: string, old: SnapshotEntry): WorkspaceChange {
  if (old.text !== undefined) return { path, kind: 'removed', lines: { added: 0, removed: lineCount(old.text) } };
  return { path, kind: 'removed' };
}

function changed(path: string, old: SnapshotEntry, now: SnapshotEntry): WorkspaceChange {
  if (old.type !== now.type) return { path, kind: 'changed', note: `now a ${now.type === 'link' ? 'link' : now.type}` };
  if (now.type === 'link') return { path, kind: 'changed', note: `a link to ${now.target ?? '?'} now` };
  const mode = exec(old, now).note;
  if (old.text !== undefined && now.text !== undefined)
    return { path, kind: 'changed', lines: lineChanges(old.text, now.text), ...(mode ? { note: mode } : {}) };
  return { path, kind: 'changed', note: joinNotes(`${old.size} → ${now.size} bytes`, mode) };
}

/** Says so when a file became executable (or stopped being). */
function exec(old: SnapshotEntry | undefined, now: SnapshotEntry): { note?: string } {
  const wasExec = old !== undefined && (old.mode & 0o111) !== 0;
  const isExec = (now.mode & 0o111) !== 0;
  if (isExec && !wasExec) return { note: 'executable' };
  if (!isExec && wasExec) return { note: 'no longer executable' };
  return {};
}

function joinNotes(...notes: Array<string | undefined>): string {
  return notes.filter((n) => n !== undefined && n !== '').join(', ');
}

function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all;
}

function lineCount(text: string): number {
  return lines(text).length;
}

/**
 * Lines added and removed, as a line diff would count them for most edits:
 * the common first and last lines are set aside, and of the middle, lines
 * of one side not matched by an equal line of the other are counted (a
 * moved line counts as unchanged).
 */
export function lineChanges(before: string, after: string): { added: number; removed: number } {
  const a = lines(before);
  const b = lines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const left = new Map<string, number>();
  for (const line of a.slice(start, endA)) left.set(line, (left.get(line) ?? 0) + 1);
  let addedLines = 0;
  for (const line of b.slice(start, endB)) {
    const n = left.get(line) ?? 0;
    if (n > 0) left.set(line, n - 1);
    else addedLines++;
  }
  let removedLines = 0;
  for (const n of left.values()) removedLines += n;
  return { added: addedLines, removed: removedLines };
}

/** A path for a Discord message: in a code span, no backticks or control characters that could break out of it. */
function shownPath(path: string): string {
  return `\`${path.replace(/`/g, 'ˋ').replace(/[\p{Cc}\p{Cf}]/gu, '�')}\``;
}

/** The list for Discord: one line per change, at most `max` lines, then how many more. */
export function describeChanges(changes: readonly WorkspaceChange[], truncated: boolean, max = 20): string {
  const shown = changes.slice(0, max).map((change) => {
    const verb = change.kind === 'added' ? 'new' : change.kind === 'removed' ? 'deleted' : 'changed';
    const counts = change.lines === undefined ? '' : ` +${change.lines.added} −${change.lines.removed}`;
    const note = change.note === undefined || change.note === '' ? '' : ` (${change.note})`;
    return `• ${shownPath(change.path)} ${verb}${counts}${note}`;
  });
  if (changes.length > max) shown.push(`…and ${changes.length - max} more`);
  if (truncated) shown.push('…and the workspace holds more files than can be compared, so there may be other changes');
  return shown.join('\n');
}
