import { describe, expect, it } from 'vitest';
import { fenceLanguage, languageOfPath, renderMarkdownBlocks as sanitizedBlocks } from './markdown';

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
