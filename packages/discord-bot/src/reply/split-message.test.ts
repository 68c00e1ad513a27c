import { describe, expect, it } from 'vitest';
import { DISCORD_MESSAGE_LIMIT, openFenceAt, splitMessage } from './split-message.js';

interface OpenFence {
  marker: string;
  info: string;
}

/** The block left open after `text`, by CommonMark's fence rules, written again here to check the splitter from outside. */
function openAfter(text: string): OpenFence | undefined {
  let open: OpenFence | undefined;
  for (const line of text.split('\n')) {
    if (open) {
      const run = /^ {0,3}(`{3,}|~{3,})[ \t\r]*$/.exec(line)?.[1];
      if (run && run[0] === open.marker[0] && run.length >= open.marker.length) open = undefined;
    } else {
      const m = /^ {0,3}(`{3,}|~{3,})(.*)$/s.exec(line);
      if (m?.[1] && !(m[1][0] === '`' && m[2]?.includes('`'))) open = { marker: m[1], info: (m[2] ?? '').trim() };
    }
  }
  return open;
}

/** The block open at `offset` of `text`: after the line it falls in (a fence line cut inside counts as whole). */
function openAt(text: string, offset: number): OpenFence | undefined {
  const end = text.indexOf('\n', offset);
  return openAfter(text.slice(0, end === -1 ? text.length : end));
}

/**
 * Whether the chunks are the text cut up by the documented rules: each chunk is
 * [reopen line] + a run of the original + [close line], the added lines exactly
 * where a block is open, and the runs separated by whitespace only ("\n" or ""
 * inside a code block). Searches, since a chunk's last line could be added or original.
 */
function explains(original: string, chunks: string[], limit: number): boolean {
  const text = original.trimEnd(); // the text's trailing whitespace is dropped, even on a fence line
  const go = (i: number, cursor: number, inside: OpenFence | undefined): boolean => {
    if (i === chunks.length) return !/\S/.test(text.slice(cursor));
    let chunk = chunks[i]!;
    if (inside) {
      // The info string is left out when the lines around the chunk would leave it no room (2 characters).
      const full = `${inside.marker}${inside.info.startsWith(inside.marker[0]!) ? ' ' : ''}${inside.info}\n`;
      const reopen = full.length + inside.marker.length + 1 + 2 <= limit ? full : `${inside.marker}\n`;
      if (!chunk.startsWith(reopen)) return false;
      chunk = chunk.slice(reopen.length);
    }
    const close = /\n(`{3,}|~{3,})$/.exec(chunk);
    const readings: Array<[string, string | undefined]> = [[chunk, undefined]];
    if (close) readings.push([chunk.slice(0, close.index), close[1]]);
    const gap = inside ? (text[cursor] === '\n' ? 1 : 0) : (/^\s*/.exec(text.slice(cursor))?.[0].length ?? 0);
    for (const [body, added] of readings) {
      for (let g = 0; g <= gap; g++) {
        if (!text.startsWith(body, cursor + g)) continue;
        const end = cursor + g + body.length;
        const state = openAt(text, end);
        if (added === undefined ? state !== undefined : state?.marker !== added) continue;
        if (go(i + 1, end, added === undefined ? undefined : state)) return true;
      }
    }
    return false;
  };
  return go(0, 0, undefined);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkChunks(text: string, chunks: string[], limit: number): void {
  for (const chunk of chunks) {
    expect(chunk.length).toBeLessThanOrEqual(limit);
    expect(chunk.trim()).not.toBe('');
    expect(openAfter(chunk), `unbalanced: ${JSON.stringify(chunk)}`).toBeUndefined();
    expect(LONE_SURROGATE.test(chunk), 'a lone surrogate').toBe(false);
  }
  expect(explains(text, chunks, limit), `not explained by the rules: ${JSON.stringify(chunks)}`).toBe(true);
}

const para = (n: number, word = 'lorem'): string => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

describe('splitMessage', () => {
  const a1000 = 'a'.repeat(1000);
  const cases: Array<{ name: string; text: string; limit?: number; expected: string[] }> = [
    { name: 'short text: one chunk', text: 'Hello **world**', expected: ['Hello **world**'] },
    {
      name: 'exactly the limit: one chunk',
      text: `${'x'.repeat(999)}\n\n${'y'.repeat(999)}`,
      expected: [`${'x'.repeat(999)}\n\n${'y'.repeat(999)}`],
    },
    {
      name: 'one over the limit: split at the newline, which is dropped',
      text: `${a1000}\n${'b'.repeat(1000)}`,
      expected: [a1000, 'b'.repeat(1000)],
    },
    {
      name: 'blank line preferred over a later newline',
      text: `${'p'.repeat(900)}\n\n${'q'.repeat(500)}\n${'r'.repeat(500)}\n${'s'.repeat(500)}`,
      expected: ['p'.repeat(900), `${'q'.repeat(500)}\n${'r'.repeat(500)}\n${'s'.repeat(500)}`],
    },
    {
      name: 'paragraphs packed, blank lines at the split dropped',
      text: `${a1000}\n\n${'b'.repeat(900)}\n\n \n\n${'c'.repeat(600)}`,
      expected: [`${a1000}\n\n${'b'.repeat(900)}`, 'c'.repeat(600)],
    },
    {
      name: 'leading blank lines and trailing whitespace dropped',
      text: '\n \n  indented\n\n  \n',
      expected: ['  indented'],
    },
    { name: 'whitespace only: no chunk', text: ' \n\t\n ', expected: [] },
    { name: 'empty: no chunk', text: '', expected: [] },
    {
      name: 'a 5,000-char line without spaces is hard-cut',
      text: 'x'.repeat(5000),
      expected: ['x'.repeat(2000), 'x'.repeat(2000), 'x'.repeat(1000)],
    },
    {
      name: 'a long line is cut after the last space that fits',
      text: 'aaaa bbbb cccc dddd',
      limit: 12,
      expected: ['aaaa bbbb ', 'cccc dddd'],
    },
    {
      name: 'a ~~~ fence is closed and reopened the same way',
      text: '~~~python\nline1\nline2\nline3\n~~~',
      limit: 26,
      expected: ['~~~python\nline1\nline2\n~~~', '~~~python\nline3\n~~~'],
    },
    {
      name: 'an indented fence reopens without the indent, a longer close closes it',
      text: '   ````sh\none\ntwo\n`````',
      limit: 22,
      expected: ['   ````sh\none\n````', '````sh\ntwo\n`````'],
    },
    {
      name: 'blank code lines at a split are kept',
      text: '```\na\n\n\nb\n```',
      limit: 12,
      expected: ['```\na\n\n\n```', '```\nb\n```'],
    },
    {
      name: 'a cut never starts a line that reads as a fence',
      text: `aaaa bbbb \`\`\`${'c'.repeat(18)}`,
      limit: 20,
      expected: ['aaaa ', `bbbb \`\`\`${'c'.repeat(12)}`, 'c'.repeat(6)],
    },
    {
      name: 'inline ```js``` is not a fence',
      text: 'use ```js``` inline\n```js``` here\nend',
      limit: 20,
      expected: ['use ```js``` inline', '```js``` here\nend'],
    },
  ];
  it.each(cases)('$name', ({ text, limit, expected }) => {
    const chunks = splitMessage(text, limit);
    expect(chunks).toEqual(expected);
    checkChunks(text, chunks, limit ?? DISCORD_MESSAGE_LIMIT);
  });

  it('splits a long code block over three chunks, closed and reopened with its info string', () => {
    const code = Array.from({ length: 120 }, (_, i) => `const value${i} = compute(${i}); // step ${i}`);
    const text = `Intro:\n\n\`\`\`ts\n${code.join('\n')}\n\`\`\`\n\nDone.`;
    const [intro, ...chunks] = splitMessage(text);
    // The blank line after the intro is the last paragraph boundary that fits, so the intro goes alone.
    expect(intro).toBe('Intro:');
    expect(chunks).toHaveLength(3);
    checkChunks(text, [intro!, ...chunks], DISCORD_MESSAGE_LIMIT);
    expect(chunks[0]!.startsWith('```ts\n')).toBe(true);
    expect(chunks[0]!.endsWith('\n```')).toBe(true);
    expect(chunks[1]!.startsWith('```ts\n')).toBe(true);
    expect(chunks[1]!.endsWith('\n```')).toBe(true);
    expect(chunks[2]!.startsWith('```ts\n')).toBe(true);
    expect(chunks[2]!.endsWith('```\n\nDone.')).toBe(true);
    // Remove the added lines, join with the newlines dropped at the splits: the original comes back.
    const parts = [chunks[0]!.slice(0, -4), chunks[1]!.slice(6, -4), chunks[2]!.slice(6)];
    expect(`Intro:\n\n${parts.join('\n')}`).toBe(text);
  });

  it('moves a code block that fits a message whole to the next chunk', () => {
    const prose = para(200);
    const calls = (n: number): string => Array.from({ length: n }, (_, i) => `call(${i});`).join('\n');
    // The blank code line would be the last paragraph boundary that fits; splitting there would cut the block.
    const block = `\`\`\`js\n${calls(20)}\n\n${calls(40)}\n\`\`\``;
    const text = `${prose}\n${block}\nafter`;
    const chunks = splitMessage(text);
    expect(chunks).toEqual([prose, `${block}\nafter`]);
    checkChunks(text, chunks, DISCORD_MESSAGE_LIMIT);
  });

  it('never splits a surrogate pair or a grapheme', () => {
    const text = `a${'😀'.repeat(1500)}`;
    const chunks = splitMessage(text);
    expect(chunks.map((c) => c.length)).toEqual([1999, 1002]);
    expect(chunks.join('')).toBe(text);
    checkChunks(text, chunks, DISCORD_MESSAGE_LIMIT);
    // Nor a grapheme: "👩‍💻" is 5 code units (woman, zero-width joiner, laptop).
    const coders = `a${'👩‍💻'.repeat(500)}`;
    const pieces = splitMessage(coders);
    expect(pieces.map((c) => c.length)).toEqual([1996, 505]);
    expect(pieces.join('')).toBe(coders);
  });

  it('cuts a code line longer than a chunk and keeps the fence around each piece', () => {
    const text = `\`\`\`\n${'z'.repeat(4500)}\n\`\`\``;
    const chunks = splitMessage(text);
    checkChunks(text, chunks, DISCORD_MESSAGE_LIMIT);
    expect(chunks.map((c) => c.replace(/^```\n/, '').replace(/\n```$/, '')).join('')).toBe('z'.repeat(4500));
  });

  it('reopens without an info string too long to repeat (degenerate limits)', () => {
    const open = `\`\`\`${'i'.repeat(25)}`;
    const chunks = splitMessage(`${open}\nl1\nl2\n\`\`\``, 34);
    expect(chunks).toEqual([`${open}\n\`\`\``, '```\nl1\nl2\n```']);
    for (const chunk of chunks) expect(openAfter(chunk)).toBeUndefined();
  });

  it('rejects a limit that leaves no room', () => {
    expect(() => splitMessage('abc', 1)).toThrow(RangeError);
    expect(() => splitMessage('abc', 10.5)).toThrow(RangeError);
  });

  it('keeps every rule on random Markdown-ish input (seeded)', () => {
    let seed = 0x5eed;
    const rand = (): number => {
      // mulberry32: small, seeded, good enough to vary the shapes
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
    const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)]!;
    const words = [
      'the',
      'reply',
      'naïve',
      '😀',
      '👩‍💻',
      '**bold**',
      '`x`',
      'a'.repeat(30),
      '```js```',
      '~~',
      '-',
      '\t',
    ];
    const line = (max: number): string =>
      Array.from({ length: int(0, max) }, () => pick(words)).join(pick([' ', ' ', '  ', '']));
    const block = (): string => {
      switch (int(0, 5)) {
        case 0:
        case 1:
          return Array.from({ length: int(1, 5) }, () => line(14)).join('\n');
        case 2: {
          const marker = pick(['`', '~']).repeat(int(3, 5));
          const info = pick(['', 'ts', ' python ', 'sh title=x', marker[0] === '~' ? 'a`b' : 'md']);
          const body = Array.from({ length: int(0, 25) }, () =>
            pick([
              line(10),
              '',
              '    indented',
              '~~~',
              '``',
              ' '.repeat(int(0, 3)) + marker.slice(1),
              'q'.repeat(int(50, 400)),
              line(60),
            ]),
          );
          const close = rand() < 0.1 ? '' : `\n${' '.repeat(int(0, 3))}${marker}${pick(['', marker[0]!, '  '])}`;
          return `${' '.repeat(int(0, 3))}${marker}${info}\n${body.join('\n')}${close}`;
        }
        case 3:
          return pick(['😀', 'w', 'word ', ' ']).repeat(int(20, 500));
        case 4:
          return Array.from({ length: int(1, 4) }, () => `- ${line(8)}`).join('\n');
        default:
          return pick(['', ' ', '\n', '  \n \t']);
      }
    };
    for (let n = 0; n < 400; n++) {
      const text = Array.from({ length: int(1, 12) }, block).join(pick(['\n', '\n\n', '\n \n']));
      const limit = pick([40, 57, 100, 250, 600, DISCORD_MESSAGE_LIMIT]);
      const chunks = splitMessage(text, limit);
      if (n === 4076) require('node:fs').writeFileSync('/tmp/case.json', JSON.stringify({ text, limit, chunks }));
      try {
        checkChunks(text, chunks, limit);
      } catch (error) {
        throw new Error(`case ${n} (limit ${limit}) failed: ${JSON.stringify(text)}\n${String(error)}`);
      }
    }
  });
});

describe('openFenceAt', () => {
  it.each([
    ['```ts\nconst a = 1;', '```ts'],
    ['text\n```ts\nconst a = 1;\n```', undefined],
    ['~~~~ sh \necho\n~~~', '~~~~sh'],
    ['   ```\ncode', '```'],
    ['    ```\nnot a fence (indented code)', undefined],
    ['use ```js``` inline', undefined],
    ['partial ``', undefined],
    ['```\r\ncode\r\n```\r\n', undefined],
    ['', undefined],
  ])('%j → %j', (text, expected) => {
    expect(openFenceAt(text)).toBe(expected);
  });
});
