import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import MarkdownIt, { type Token } from 'markdown-it';

hljs.registerLanguage('bash', bash);
hljs.registerLanguage('css', css);
hljs.registerLanguage('diff', diff);
hljs.registerLanguage('javascript', javascript);
hljs.registerLanguage('json', json);
hljs.registerLanguage('python', python);
hljs.registerLanguage('typescript', typescript);
hljs.registerLanguage('xml', xml);
hljs.registerLanguage('yaml', yaml);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx', 'mts', 'cts'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['jsonc', 'json5'], { languageName: 'json' });

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A link target that is safe to follow: http(s), mailto, or relative to this
 * page. Anything else (`javascript:`, `data:`, `vbscript:`, …) is not a link.
 */
export function safeHref(url: string): string | null {
  const trimmed = url.trim();
  if (trimmed === '') return null;
  try {
    const parsed = new URL(trimmed, 'https://relative.invalid/');
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:' || parsed.protocol === 'mailto:') return trimmed;
  } catch {
    return null;
  }
  return null;
}

/** A fence's language (its info string's first word), lower-cased, or '' when there is none or it is not a plain name. */
export function fenceLanguage(info: string | undefined): string {
  const word = (info ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  return /^[a-z0-9_+-]{1,32}$/.test(word) ? word : '';
}

/** Code as highlighted HTML (escaped text in highlight.js spans), or escaped text for a language it does not know. */
function highlightedHtml(code: string, language: string): string {
  return language !== '' && hljs.getLanguage(language) ? hljs.highlight(code, { language }).value : escapeHtml(code);
}

const EXTENSION_LANGUAGE: Readonly<Record<string, string>> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  json: 'json',
  py: 'python',
  sh: 'bash',
  bash: 'bash',
  css: 'css',
  html: 'xml',
  xml: 'xml',
  svg: 'xml',
  yml: 'yaml',
  yaml: 'yaml',
  diff: 'diff',
};

/** The language highlight.js knows a file by, from its extension, or ''. */
export function languageOfPath(path: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return EXTENSION_LANGUAGE[ext] ?? '';
}

/** How deep quotes and lists may nest in a message; a `>` or a list marker deeper than this is text. */
export const MAX_NESTING = 16;

/**
 * markdown-it, not marked: its parsers are linear in the input (no backtracking emphasis,
 * CommonMark's delimiter algorithm with its bottom bounds), where marked took 2.7 s in a browser
 * on 60 KB of `_a` and overflowed its stack on 60 KB of `>`. Raw HTML is off (a message's `<b>` is
 * text); links are followed only where `safeHref` allows; bare URLs and emails are linked as
 * GitHub does, but not bare names like `README.md` (a country's domain to a fuzzy linker).
 */
const md = new MarkdownIt('default', { html: false, linkify: true, breaks: true, typographer: false });
md.linkify.set({ fuzzyLink: false, fuzzyEmail: true, fuzzyIP: false });
md.validateLink = (url) => safeHref(url) !== null;

/**
 * Quotes and lists each parse what they hold with the block parser again, so their depth is the
 * parser's stack: counted here, per parse, and a container past `MAX_NESTING` is left to the
 * paragraph rule (its markers shown as text) instead of nesting further.
 */
for (const name of ['blockquote', 'list']) {
  const rule = md.block.ruler.__rules__.find((r) => r.name === name);
  if (rule === undefined) throw new Error(`markdown-it has no ${name} rule`);
  const parse = rule.fn;
  md.block.ruler.at(
    name,
    (state, startLine, endLine, silent) => {
      const env = state.env as { depth?: number };
      const depth = env.depth ?? 0;
      if (depth >= MAX_NESTING) return false;
      env.depth = depth + 1;
      try {
        return parse(state, startLine, endLine, silent);
      } finally {
        env.depth = depth;
      }
    },
    { alt: rule.alt },
  );
}

// Remote images would tell their host who reads the thread, and when: shown as links instead.
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet('src') ?? '');
  const target = safeHref(src);
  const label = escapeHtml(token.content || src);
  return target === null ? label : `<a href="${escapeHtml(target)}">${label} (image)</a>`;
};
const codeHtml = (code: string, info: string): string => {
  const language = fenceLanguage(info);
  const cls = language !== '' ? ` class="hljs language-${language}"` : ' class="hljs"';
  return `<pre><code${cls}>${highlightedHtml(code, language)}</code></pre>\n`;
};
// A line break is `<br>` alone, as marked drew it: no line break after it in the text.
md.renderer.rules.softbreak = () => '<br>';
md.renderer.rules.hardbreak = () => '<br>';
md.renderer.rules.fence = (tokens, idx) => codeHtml(withoutFinalNewline(tokens[idx]!.content), tokens[idx]!.info);
md.renderer.rules.code_block = (tokens, idx) => codeHtml(withoutFinalNewline(tokens[idx]!.content), '');

/** markdown-it keeps a code block's last line break; the code as written (and copied) ends before it. */
function withoutFinalNewline(code: string): string {
  return code.endsWith('\n') ? code.slice(0, -1) : code;
}

/**
 * What a message may draw: text, lists, tables, code, quotes and links. No
 * styles or classes of its own (so no full-screen overlays or fake dialogs),
 * no forms or inputs (nothing to type a token into), no frames, media or
 * images (nothing fetched from elsewhere), no ids (nothing to clobber).
 */
const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    'style',
    'form',
    'input',
    'button',
    'textarea',
    'select',
    'option',
    'label',
    'fieldset',
    'iframe',
    'frame',
    'frameset',
    'object',
    'embed',
    'img',
    'picture',
    'source',
    'video',
    'audio',
    'svg',
    'math',
    'dialog',
    'template',
  ],
  FORBID_ATTR: ['style', 'id', 'name', 'srcset', 'action', 'formaction', 'background', 'poster'],
  ALLOW_DATA_ATTR: false,
};

let hooked = false;
/** Every link opens in a new tab without a handle on this page; one with an unsafe scheme becomes plain text. */
function hookLinks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    // Classes only from highlight.js; any other could dress a message up as the app's own UI.
    const classes = node.getAttribute('class');
    if (classes !== null) {
      const kept = (node.tagName === 'CODE' || node.tagName === 'SPAN' ? classes.split(/\s+/) : []).filter((c) =>
        /^(hljs(-[a-z0-9_-]+)?|language-[a-z0-9_+-]+)$/i.test(c),
      );
      if (kept.length > 0) node.setAttribute('class', kept.join(' '));
      else node.removeAttribute('class');
    }
    if (node.tagName !== 'A') return;
    const href = safeHref(node.getAttribute('href') ?? '');
    if (href === null) {
      node.removeAttribute('href');
      return;
    }
    node.setAttribute('href', href);
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  });
}

/**
 * Markdown to sanitized HTML. Called again on every delta while a run streams:
 * an unfinished code fence renders as a code block up to where the text ends.
 */
export function renderMarkdown(source: string): string {
  return sanitize(md.render(source, {}));
}

function sanitize(html: string): string {
  hookLinks();
  return DOMPurify.sanitize(html, PURIFY) as string;
}

/** A stretch of a message: sanitized HTML, or a code block the view draws itself (with its language and a copy button). */
export type MarkdownBlock =
  | { readonly kind: 'html'; readonly html: string }
  | {
      readonly kind: 'code';
      /** The fence's language as written ('' when none). */
      readonly language: string;
      /** The code as written, for the copy button. */
      readonly code: string;
      /** The code highlighted, sanitized. */
      readonly html: string;
    };

/**
 * Markdown as blocks: each top-level fenced code block on its own (the view gives it a language
 * label and a copy button, which the sanitizer would never let through as HTML), and the
 * markdown between them as sanitized HTML. Code nested in a list or quote stays in its HTML.
 * `clean` is DOMPurify with the rules above; the tests, which have no DOM, pass the HTML through.
 */
export function renderMarkdownBlocks(source: string, clean: (html: string) => string = sanitize): MarkdownBlock[] {
  const env = {};
  const tokens = md.parse(source, env);
  const blocks: MarkdownBlock[] = [];
  let pending: Token[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    blocks.push({ kind: 'html', html: clean(md.renderer.render(pending, md.options, env)) });
    pending = [];
  };
  for (const token of tokens) {
    if (token.level === 0 && (token.type === 'fence' || token.type === 'code_block')) {
      flush();
      const language = token.type === 'fence' ? fenceLanguage(token.info) : '';
      const code = withoutFinalNewline(token.content);
      blocks.push({ kind: 'code', language, code, html: clean(highlightedHtml(code, language)) });
    } else pending.push(token);
  }
  flush();
  return blocks;
}

/** Code highlighted for `language` (a fence's or a file's), sanitized like every other HTML of a message. */
export function highlightCode(code: string, language: string): string {
  return sanitize(highlightedHtml(code, language));
}
