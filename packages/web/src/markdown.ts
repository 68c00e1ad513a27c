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
import { Marked, type Token, type TokensList } from 'marked';

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

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    // Remote images would tell their host who reads the thread, and when: shown as links instead.
    image({ href, text }) {
      const target = safeHref(href);
      const label = escapeHtml(text || href);
      return target === null ? label : `<a href="${escapeHtml(target)}">${label} (image)</a>`;
    },
    code({ text, lang }) {
      const language = fenceLanguage(lang);
      const cls = language !== '' ? ` class="hljs language-${language}"` : ' class="hljs"';
      return `<pre><code${cls}>${highlightedHtml(text, language)}</code></pre>\n`;
    },
  },
});

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
  hookLinks();
  const html = marked.parse(source, { async: false });
  return sanitize(html);
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
  const tokens = marked.lexer(source);
  const blocks: MarkdownBlock[] = [];
  let pending: Token[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const list = Object.assign(pending, { links: tokens.links }) as TokensList;
    blocks.push({ kind: 'html', html: clean(marked.parser(list)) });
    pending = [];
  };
  for (const token of tokens) {
    if (token.type === 'code') {
      flush();
      const language = fenceLanguage(token.lang as string | undefined);
      const code = String(token.text ?? '');
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
