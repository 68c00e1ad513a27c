import { describe, expect, it } from 'vitest';
import { fenceLanguage, languageOfPath, MAX_NESTING, renderMarkdownBlocks as sanitizedBlocks } from './markdown';

const renderMarkdownBlocks = (source: string) => sanitizedBlocks(source, (html) => html);

/**
 * The markdown pipeline's structure (node has no DOM for DOMPurify, so the HTML is passed through):
 * what it strips is checked in a real browser, in `packages/launcher/test/browser-design.test.ts`
 * and `page-hardening.test.ts`.
 */
describe('renderMarkdownBlocks', () => {
  it('gives each top-level code block its own block, with its language and text', () => {
    const blocks = renderMarkdownBlocks('Intro **bold**\n\n```ts\nconst a = 1;\n```\n\nAfter.');
    expect(blocks.map((b) => b.kind)).toEqual(['html', 'code', 'html']);
    const code = blocks[1]!;
    expect(code).toMatchObject({ kind: 'code', language: 'ts', code: 'const a = 1;' });
    expect(code.html).toContain('<span class="hljs-keyword">const</span>');
    expect(blocks[0]!.html).toContain('<strong>bold</strong>');
  });

  it('draws an unfinished fence (a run still streaming) as code up to where the text ends', () => {
    const blocks = renderMarkdownBlocks('Here:\n\n```js\nconst answer');
    expect(blocks[1]).toMatchObject({ kind: 'code', language: 'js', code: 'const answer' });
  });

  it('escapes code in a language it does not know', () => {
    const [block] = renderMarkdownBlocks('```cobol\n<b>x</b>\n```');
    expect(block).toMatchObject({ kind: 'code', language: 'cobol' });
    expect(block!.html).toBe('&#60;b&#62;x&#60;/b&#62;');
  });

  it('resolves reference links across code blocks', () => {
    const blocks = renderMarkdownBlocks('See [the docs][d].\n\n```\nx\n```\n\n[d]: https://example.com/docs');
    expect(blocks[0]!.html).toContain('href="https://example.com/docs"');
  });

  it('keeps code nested in a list inside its HTML', () => {
    const blocks = renderMarkdownBlocks('- step:\n\n  ```sh\n  npm test\n  ```');
    expect(blocks.map((b) => b.kind)).toEqual(['html']);
    expect(blocks[0]!.html).toContain('class="hljs language-sh"');
  });

  it('renders tables, lists and quotes as GitHub does', () => {
    const [block] = renderMarkdownBlocks('| a | b |\n| - | - |\n| 1 | 2 |\n\n- one\n- two\n\n> quoted');
    expect(block!.html).toContain('<table>');
    expect(block!.html).toContain('<ul>');
    expect(block!.html).toContain('<blockquote>');
  });
});

/** This process's CPU time so far, in ms: unlike the clock, it does not count time other processes took the core. */
const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1_000;
};

/** The CPU ms of rendering `source` `reps` times. */
function renderCost(source: string, reps: number): number {
  const start = cpuMs();
  for (let i = 0; i < reps; i++) renderMarkdownBlocks(source);
  return cpuMs() - start;
}

/**
 * How much more a render of `large` costs than one of `small`: each measured over enough renders
 * to take 40 ms or more, the two taken in turn five times and the cheapest of each kept (the
 * least disturbed by garbage collection and by whatever else the machine does).
 */
function costRatio(small: string, large: string): number {
  renderCost(small, 2); // warm up the JIT
  const reps = Math.max(1, Math.ceil(40 / Math.max(renderCost(small, 1), 0.1)));
  let smallBest = Number.POSITIVE_INFINITY;
  let largeBest = Number.POSITIVE_INFINITY;
  for (let trial = 0; trial < 5; trial++) {
    smallBest = Math.min(smallBest, renderCost(small, reps));
    largeBest = Math.min(largeBest, renderCost(large, reps));
  }
  return largeBest / smallBest;
}

const html = (source: string) =>
  renderMarkdownBlocks(source)
    .map((b) => b.html)
    .join('');
/** One list nested `depth` deep, an item per level. */
const nestedItems = (depth: number) =>
  Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}- item ${i}\n`).join('');
const count = (text: string, what: string) => text.split(what).length - 1;

describe('hostile input (issue 28: one message must not blank a thread or freeze the page)', () => {
  // Linear means twice the input costs about twice the time; a quadratic parser costs four times.
  // A ratio, not a time: the machine's speed cancels out. marked, the renderer before, took 4.4x
  // on `_a` (1.2 s for 30 KB in Node) and threw on 60 KB of `>`.
  it.each([
    ['`_a` repeated (emphasis that never closes)', (n: number) => '_a'.repeat(n / 2)],
    ['`>` repeated (quotes in quotes)', (n: number) => '>'.repeat(n)],
    ['`*a` repeated', (n: number) => '*a'.repeat(n / 2)],
    ['`[` repeated (links that never close)', (n: number) => '['.repeat(n)],
    ['list items nested 24 deep, again and again', (n: number) => nestedItems(24).repeat(n / nestedItems(24).length)],
  ])('renders 60 KB of %s in less than 3x the time of 30 KB', { timeout: 60_000 }, (_name, make) => {
    expect(costRatio(make(30_000), make(60_000))).toBeLessThan(3);
  });

  it(`nests quotes ${MAX_NESTING} deep and shows the markers past that as text`, () => {
    const out = html(`${'>'.repeat(MAX_NESTING + 4)} deep`);
    expect(count(out, '<blockquote>')).toBe(MAX_NESTING);
    expect(out).toContain('&gt;&gt;&gt;&gt; deep');
    // 60 KB of `>` renders (it overflowed the stack before) and stops nesting at the cap.
    expect(count(html('>'.repeat(60_000)), '<blockquote>')).toBe(MAX_NESTING);
  });

  it(`nests lists ${MAX_NESTING} deep and shows deeper items as text`, () => {
    const out = html(nestedItems(MAX_NESTING + 4));
    expect(count(out, '<ul>')).toBe(MAX_NESTING);
    expect(out).toContain(`item ${MAX_NESTING + 3}`);
  });

  it('shows raw HTML as text, links only safe schemes, and links bare URLs but not file names', () => {
    const out = html(
      '<b>bold?</b> [run](javascript:alert(1)) see https://example.com/a and README.md or me@example.com',
    );
    expect(out).toContain('&lt;b&gt;bold?&lt;/b&gt;');
    expect(out).not.toContain('href="javascript');
    expect(out).toContain('<a href="https://example.com/a">https://example.com/a</a>');
    expect(out).toContain('<a href="mailto:me@example.com">me@example.com</a>');
    expect(out).not.toContain('README.md</a>');
  });
});

describe('fenceLanguage and languageOfPath', () => {
  it('takes a plain language name only', () => {
    expect(fenceLanguage(' TypeScript title="x"')).toBe('typescript');
    expect(fenceLanguage('js" onmouseover="alert(1)')).toBe('');
    expect(fenceLanguage(undefined)).toBe('');
  });

  it('knows a file by its extension', () => {
    expect(languageOfPath('src/app.tsx')).toBe('typescript');
    expect(languageOfPath('README')).toBe('');
  });
});
