import { memo } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { renderMarkdownBlocks } from '../markdown';
import { ErrorBoundary } from './error-boundary';
import { Icon } from './icons';

/**
 * A message's markdown, sanitized (`markdown.ts`), with each code block drawn here: a language
 * label and a Copy button above it, which the sanitizer would not let a message draw itself.
 * `streaming` puts the caret after the last word while a run writes. Markdown that cannot be
 * drawn shows as the text it is (`ErrorBoundary`), never as nothing.
 */
export const Markdown = memo(function Markdown(props: { source: string; streaming?: boolean }) {
  return (
    <ErrorBoundary resetKey={props.source} fallback={() => <RawText source={props.source} />}>
      <RenderedMarkdown source={props.source} streaming={props.streaming} />
    </ErrorBoundary>
  );
});

/** A message's text as written, for when its markdown cannot be drawn. */
export function RawText(props: { source: string }) {
  return (
    <div class="markdown markdown-raw" data-raw="true">
      {props.source}
    </div>
  );
}

function RenderedMarkdown(props: { source: string; streaming?: boolean | undefined }) {
  const blocks = useMemo(() => renderMarkdownBlocks(props.source), [props.source]);
  return (
    <div class={`markdown${props.streaming === true ? ' streaming' : ''}`}>
      {blocks.map((block, i) =>
        block.kind === 'html' ? (
          <div key={i} class="md-html" dangerouslySetInnerHTML={{ __html: block.html }} />
        ) : (
          <CodeBlock key={i} language={block.language} code={block.code} html={block.html} />
        ),
      )}
    </div>
  );
}

export function CodeBlock(props: { language: string; code: string; html: string }) {
  const language = props.language;
  return (
    <div class="code-block">
      <div class="code-head">
        <span class="code-lang">{language === '' ? 'text' : language}</span>
        <CopyButton text={props.code} label="Copy code" />
      </div>
      <pre>
        <code
          class={language === '' ? 'hljs' : `hljs language-${language}`}
          dangerouslySetInnerHTML={{ __html: props.html }}
        />
      </pre>
    </div>
  );
}

/** Copies `text`; says "Copied" for a moment (or that it could not). */
export function CopyButton(props: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const reset = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(reset.current), []);
  const copy = async () => {
    const ok = await copyText(props.text);
    setState(ok ? 'copied' : 'failed');
    clearTimeout(reset.current);
    reset.current = setTimeout(() => setState('idle'), 1_600);
  };
  return (
    <button
      type="button"
      class="code-copy"
      aria-label={state === 'idle' ? props.label : state === 'copied' ? 'Copied' : 'Copy failed'}
      onClick={() => void copy()}
    >
      <Icon name={state === 'copied' ? 'check' : 'copy'} />
      <span>{state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}</span>
    </button>
  );
}

/**
 * The clipboard API, or, where the page is not a secure context (a server reached over plain
 * http on a LAN address), the older copy command on a hidden textarea.
 */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.append(area);
    area.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    } finally {
      area.remove();
    }
  }
}
