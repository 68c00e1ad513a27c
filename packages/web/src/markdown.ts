import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import typescript from 'highlight.js/lib/languages/typescript';
import { Marked } from 'marked';

hljs.registerLanguage('bash', bash);
hljs.registerLanguage('sh', bash);
hljs.registerLanguage('javascript', javascript);
hljs.registerLanguage('js', javascript);
hljs.registerLanguage('json', json);
hljs.registerLanguage('python', python);
hljs.registerLanguage('typescript', typescript);
hljs.registerLanguage('ts', typescript);

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
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const body =
        language !== '' && hljs.getLanguage(language) ? hljs.highlight(text, { language }).value : escapeHtml(text);
      const cls = language !== '' ? ` class="hljs language-${escapeHtml(language)}"` : ' class="hljs"';
      return `<pre><code${cls}>${body}</code></pre>\n`;
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
  return DOMPurify.sanitize(html, PURIFY) as string;
}
