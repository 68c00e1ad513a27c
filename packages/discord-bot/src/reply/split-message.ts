/**
 * Splitting a Markdown reply into Discord messages (at most 2,000 UTF-16 code
 * units each, which never exceeds Discord's count) without leaving a code block
 * open: a chunk that ends inside one gets a closing fence line, and the next
 * chunk reopens it with the same marker and info string.
 *
 * Where it splits, best first: the end of the text; a paragraph boundary (next
 * to a blank line, just before a fence opens or just after one closes); any
 * other line boundary. When that lands inside a code block that opened in the
 * chunk and fits a message of its own, the block moves whole to the next chunk
 * instead. Only a line
 * that does not fit is split within: after the last space or tab that fits,
 * else at the last grapheme boundary that fits (never inside a surrogate pair),
 * and never where either piece would read as a fence line.
 *
 * What is dropped; every other character is kept, in order, exactly once:
 * - the text's leading blank lines and trailing whitespace (so whitespace-only
 *   text gives no chunk at all);
 * - at a split between two lines, the newline between them;
 * - outside a code block, also the blank lines (empty or whitespace-only) at a
 *   split, and the whitespace-only rest of a line split within. Inside a code
 *   block blank lines are code: only that one newline goes, so joining the
 *   code parts of two chunks with "\n" (or "" where a line was split within)
 *   gives the code back;
 * - outside a code block, a run of whitespace too long to share a chunk with
 *   anything visible (no chunk is ever empty or whitespace-only).
 * A split within a line drops nothing: the space stays at the end of the earlier chunk.
 *
 * Limits, all far from a 2,000 limit: a fence whose reopen and close lines
 * leave no room is reopened without its info string, or else split bare; an
 * opening fence line longer than a chunk is cut (its rest reads as code in the
 * reopened block); a long line of nothing but fence characters is cut anyway.
 */

export const DISCORD_MESSAGE_LIMIT = 2000;

/** Room every chunk keeps besides its fence lines: one surrogate pair, so each chunk makes progress. */
const MIN_BODY = 2;

/** A fenced code block as CommonMark opens it: up to 3 spaces, then 3+ backticks or tildes, then an info string. */
interface Fence {
  /** The fence run, e.g. "```" or "~~~~"; the closing line repeats it. */
  readonly marker: string;
  readonly info: string;
  /** Index of the opening line. */
  readonly line: number;
  /** Where the block ends: the end of its closing line, or of the text if it never closes. */
  end: number;
  closed: boolean;
}

interface Line {
  readonly start: number;
  /** Exclusive; the line's newline, if any, is at `end`. */
  readonly end: number;
  readonly blank: boolean;
  readonly opens: boolean;
  readonly closes: boolean;
  /** The block open before the line, and after it. */
  readonly before: Fence | undefined;
  readonly after: Fence | undefined;
}

const OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/s;
const CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t\r]*$/;
const VISIBLE = /\S/;
const FENCE_START = /^ {0,3}(?:`{3}|~{3})/;

/** What a line does given the block open before it: closes it, opens one (its run and info string), or nothing. */
function fenceEvent(content: string, open: Fence | undefined): 'close' | { run: string; info: string } | undefined {
  if (open) {
    const run = CLOSE.exec(content)?.[1];
    return run !== undefined && run[0] === open.marker[0] && run.length >= open.marker.length ? 'close' : undefined;
  }
  const match = OPEN.exec(content);
  const run = match?.[1];
  const rest = match?.[2] ?? '';
  // A backtick fence's info string cannot hold a backtick (CommonMark): "```js```" is inline code, not a fence.
  if (run === undefined || (run[0] === '`' && rest.includes('`'))) return undefined;
  return { run, info: rest.trim() };
}

function scanLines(text: string): Line[] {
  const lines: Line[] = [];
  let fence: Fence | undefined;
  for (let start = 0; ; ) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const content = text.slice(start, end);
    const before = fence;
    const event = fenceEvent(content, fence);
    if (event === 'close') {
      fence!.end = end;
      fence!.closed = true;
      fence = undefined;
    } else if (event) {
      fence = { marker: event.run, info: event.info, line: lines.length, end: text.length, closed: false };
    }
    lines.push({
      start,
      end,
      blank: !VISIBLE.test(content),
      opens: !before && !!fence,
      closes: event === 'close',
      before,
      after: fence,
    });
    if (newline === -1) return lines;
    start = newline + 1;
  }
}

/** The opening line again, e.g. "```ts"; a space keeps an info string like "~x" from lengthening the marker. */
function reopenLine(fence: Fence): string {
  return fence.info.startsWith(fence.marker[0]!) ? `${fence.marker} ${fence.info}` : `${fence.marker}${fence.info}`;
}

/** The lines around a chunk inside a block: "```ts\n" opens the next chunk, "\n```" ends this one. */
function wrapFor(fence: Fence | undefined, limit: number): { reopen: string; close: string } | undefined {
  if (!fence) return undefined;
  const close = `\n${fence.marker}`;
  for (const reopen of [`${reopenLine(fence)}\n`, `${fence.marker}\n`]) {
    if (reopen.length + close.length + MIN_BODY <= limit) return { reopen, close };
  }
  return undefined;
}

function splitsPair(text: string, at: number): boolean {
  const high = text.charCodeAt(at - 1);
  const low = text.charCodeAt(at);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The last grapheme boundary in (from, max], so "👩‍💻" or "é" (e + accent) stay whole; at worst max, or max-1 to spare a surrogate pair. */
function hardCut(text: string, from: number, max: number): number {
  let cut = -1;
  for (const { index } of graphemes.segment(text.slice(from, max + 1))) {
    if (index > max - from) break;
    if (index > 0) cut = from + index;
  }
  if (cut > from) return cut;
  return splitsPair(text, max) && max - 1 > from ? max - 1 : max;
}

/** Cuts inside a line, in (from, max], in order of preference: after each space or tab with something visible before it (from `pos`), then hard. */
function* cutsWithin(text: string, pos: number, from: number, max: number): Generator<number> {
  const visible = /\S/g;
  visible.lastIndex = pos;
  const firstVisible = visible.exec(text)?.index ?? text.length;
  for (let i = max - 1; i >= from && i > firstVisible; i--) if (text[i] === ' ' || text[i] === '\t') yield i + 1;
  // A few hard cuts, each a grapheme further back, in case the nearest makes a fence line.
  for (let at = max, tries = 0; at > from && tries < 16; tries++) {
    const cut = hardCut(text, from, at);
    if (!splitsPair(text, cut)) yield cut;
    at = cut - 1;
  }
}

/** Splits Markdown text into chunks of at most `limit` characters each (default 2000); the rules are at the top of this file. */
export function splitMessage(text: string, limit: number = DISCORD_MESSAGE_LIMIT): string[] {
  if (!Number.isSafeInteger(limit) || limit < MIN_BODY)
    throw new RangeError(`splitMessage: limit must be an integer >= ${MIN_BODY}`);
  const src = text.trimEnd();
  const lines = scanLines(src);
  const closeOf = (fence: Fence | undefined): string => wrapFor(fence, limit)?.close ?? '';
  const chunks: string[] = [];
  let li = 0; // the line holding pos
  let pos = 0;
  let fence: Fence | undefined; // the block open at pos

  const pastLine = (k: number): void => {
    fence = lines[k]!.after;
    li = k + 1;
    pos = lines[li]?.start ?? src.length;
  };
  const emitThrough = (k: number, prefix: string): void => {
    let last = k;
    // Outside a code block, trailing blank lines say nothing; inside one they are code and stay.
    if (!lines[k]!.after) while (last > li && lines[last]!.blank) last--;
    chunks.push(prefix + src.slice(pos, lines[last]!.end) + closeOf(lines[k]!.after));
    pastLine(k);
  };

  while (li < lines.length) {
    if (!fence && !VISIBLE.test(src.slice(pos, lines[li]!.end))) {
      pastLine(li);
      continue;
    }
    const prefix = wrapFor(fence, limit)?.reopen ?? '';
    const room = limit - prefix.length;

    // Rank every line end that fits: 3 end of text, 2 paragraph boundary, 1 line boundary,
    // 0 one that leaves an empty block or a blank chunk (taken only if nothing else will do).
    let best = -1;
    let bestRank = -1;
    let miss = -1; // the first line that does not fit whole
    let visible = false;
    for (let j = li; j < lines.length; j++) {
      const line = lines[j]!;
      const length = line.end - pos;
      if (length > room) {
        if (miss < 0) miss = j;
        break;
      }
      visible ||= j === li ? VISIBLE.test(src.slice(pos, line.end)) : !line.blank;
      if (length + closeOf(line.after).length > room) {
        if (miss < 0) miss = j;
        continue;
      }
      const next = lines[j + 1];
      const rank =
        next === undefined
          ? 3
          : !visible || line.opens || next.closes
            ? 0
            : line.blank || next.blank || line.closes || next.opens
              ? 2
              : 1;
      if (rank >= bestRank) {
        best = j;
        bestRank = rank;
      }
    }

    if (bestRank >= 1) {
      let end = best;
      const block = lines[best]!.after;
      // Keep a block whole: stop just before it opens if it opened in this chunk and fits a message of its own.
      if (bestRank < 3 && block && block.line > li) {
        const size = block.end - lines[block.line]!.start + (block.closed ? 0 : closeOf(block).length);
        if (size <= limit) end = block.line - 1;
      }
      emitThrough(end, prefix);
      continue;
    }

    // No good line end: cut inside the first line that does not fit, after the whole lines before it.
    const target = lines[miss]!;
    const fenceLine = target.opens || target.closes;
    const from = Math.max(pos, target.start);
    // A fence line too long for a chunk is cut too; its pieces count as after it, so an opened block gets closed.
    const state = fenceLine ? target.after : miss === li ? fence : target.before;
    const close = closeOf(state);
    const avail = room - (from - pos) - close.length;
    const max = Math.min(target.end - 1, from + avail);
    // Each piece of a content line stays content: this chunk's last line must not read as a fence line, nor may
    // the rest start like one (how much of it the next chunk holds is not known yet, so any fence-like start counts).
    const keepsContent = (at: number): boolean =>
      fenceEvent(src.slice(from, at), state) === undefined && !FENCE_START.test(src.slice(at, at + 8));
    let cut = -1;
    // After whole lines, a fence line or a sliver of room is not worth cutting into: the chunk ends after those lines.
    if (miss === li || (!fenceLine && avail >= MIN_BODY)) {
      for (const at of cutsWithin(src, pos, from, max)) {
        if (fenceLine || keepsContent(at)) {
          cut = at;
          break;
        }
      }
    }
    if (cut < 0 && best >= 0) {
      emitThrough(best, prefix);
      continue;
    }
    // Nothing keeps the pieces content (a line of nothing but fence characters, say): cut anyway.
    if (cut < 0) cut = hardCut(src, from, max);
    const chunk = prefix + src.slice(pos, cut) + close;
    if (VISIBLE.test(chunk)) chunks.push(chunk);
    fence = state;
    li = miss;
    pos = cut;
  }
  return chunks;
}

/** For streaming: the open code fence at the end of `text`, if any (e.g. "```ts"), else undefined. */
export function openFenceAt(text: string): string | undefined {
  const fence = scanLines(text).at(-1)?.after;
  return fence ? reopenLine(fence) : undefined;
}
