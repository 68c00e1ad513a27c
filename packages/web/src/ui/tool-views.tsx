import { useState } from 'preact/hooks';
import { highlightCode, languageOfPath, safeHref } from '../markdown';
import type { LineDiff } from '../model/line-diff';
import { bubbleTool, editDiff, shortPath, type ToolDisplay } from '../model/tool-display';
import { cleanToolText, helperReport, numberedLines, outputObject, outputText } from '../model/tool-output-text';
import { Markdown } from './markdown-view';
import { navigate, threadPath } from './router';

/** Lines past which an output is folded to its start, with "Show all N lines". */
const FOLD_LINES = 12;

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Text in a `pre`, folded to its first lines when long; the whole text is in the page once, never twice. */
export function FoldedText(props: { text: string; class: string; html?: string; gutterFrom?: number }) {
  const lines = props.text.split('\n').length;
  const [all, setAll] = useState(false);
  const long = lines > FOLD_LINES + 2;
  const folded = long && !all;
  return (
    <div class={`folded-text${folded ? ' is-folded' : ''}`}>
      {props.html !== undefined ? (
        <pre class={`${props.class}${props.gutterFrom !== undefined ? ' with-gutter' : ''}`}>
          {props.gutterFrom !== undefined && (
            <span class="gutter" aria-hidden="true">
              {Array.from({ length: lines }, (_, i) => props.gutterFrom! + i).join('\n')}
            </span>
          )}
          <code class="hljs" dangerouslySetInnerHTML={{ __html: props.html }} />
        </pre>
      ) : (
        <pre class={props.class}>{props.text}</pre>
      )}
      {long && (
        <button type="button" class="show-all" aria-expanded={all} onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all ${lines} lines`}
        </button>
      )}
    </div>
  );
}

/** A unified diff of an edit: removed lines, then added ones, as GitHub draws them. */
export function DiffView(props: { diff: LineDiff; path?: string }) {
  const { diff } = props;
  const [all, setAll] = useState(false);
  const long = diff.lines.length > FOLD_LINES * 2 + 2;
  const lines = long && !all ? diff.lines.slice(0, FOLD_LINES * 2) : diff.lines;
  return (
    <div class="diff tool-input">
      {props.path !== undefined && (
        <div class="diff-head">
          <code>{props.path}</code>
          <span class="diff-stat">
            <span class="diff-stat-add">+{diff.added}</span> <span class="diff-stat-del">−{diff.removed}</span>
          </span>
        </div>
      )}
      <pre class="diff-body">
        {lines.map((line, i) =>
          line.kind === 'add' ? (
            <ins key={i} class="diff-line diff-add">
              <span class="diff-sign" aria-hidden="true">
                +
              </span>
              {line.text}
              {'\n'}
            </ins>
          ) : line.kind === 'del' ? (
            <del key={i} class="diff-line diff-del">
              <span class="diff-sign" aria-hidden="true">
                −
              </span>
              {line.text}
              {'\n'}
            </del>
          ) : (
            <span key={i} class="diff-line diff-same">
              <span class="diff-sign" aria-hidden="true">
                {' '}
              </span>
              {line.text}
              {'\n'}
            </span>
          ),
        )}
      </pre>
      {long && (
        <button type="button" class="show-all" aria-expanded={all} onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all ${diff.lines.length} lines`}
        </button>
      )}
    </div>
  );
}

function Link(props: { href: string; children: string }) {
  const href = safeHref(props.href);
  return href === null ? (
    <span>{props.children}</span>
  ) : (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {props.children}
    </a>
  );
}

function SubthreadLink(props: { threadId: string; children: string }) {
  return (
    <a
      href={threadPath(props.threadId)}
      class="subthread-link"
      onClick={(e) => {
        e.preventDefault();
        navigate(threadPath(props.threadId));
      }}
    >
      {props.children}
    </a>
  );
}

/** A call's scalar arguments as a short list (a tool we have no words for): never raw JSON first. */
function Arguments(props: { value: unknown }) {
  const entries = Object.entries(record(props.value));
  if (entries.length === 0) return <p class="tool-input meta">No input.</p>;
  return (
    <dl class="tool-input tool-args">
      {entries.map(([key, value]) => (
        <div key={key} class="tool-arg">
          <dt>{key}</dt>
          <dd>
            {typeof value === 'string' ? (
              value.includes('\n') ? (
                <pre>{value}</pre>
              ) : (
                value
              )
            ) : (
              <code>{JSON.stringify(value)}</code>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** What the call was given, formatted for what it is: a command, a diff, a path, a prompt. Exactly one `.tool-input`. */
export function ToolInput(props: { toolName: string; input: unknown; display: ToolDisplay }) {
  const { toolName, display } = props;
  const i = record(props.input);
  switch (display.kind) {
    case 'command':
      return (
        <div class="tool-command-wrap">
          {str(i.description) && <p class="tool-description">{String(i.description)}</p>}
          <pre class="tool-input tool-command">
            <span class="prompt" aria-hidden="true">
              ${' '}
            </span>
            {str(i.command) ?? ''}
          </pre>
        </div>
      );
    case 'edit': {
      const diff = editDiff(toolName, props.input);
      const path = display.subject ?? '';
      return diff === null ? <Arguments value={props.input} /> : <DiffView diff={diff} path={path} />;
    }
    case 'read':
      return (
        <p class="tool-input tool-path">
          <code>{display.subjectTitle ?? display.subject}</code>
        </p>
      );
    case 'search':
      return (
        <p class="tool-input tool-path">
          <code>{str(i.pattern) ?? ''}</code>
          {str(i.path) && (
            <span class="meta" title={String(i.path)}>
              {' '}
              in {shortPath(String(i.path))}
            </span>
          )}
          {str(i.glob) && <span class="meta"> · files {String(i.glob)}</span>}
          {str(i.type) && <span class="meta"> · type {String(i.type)}</span>}
        </p>
      );
    case 'web':
      return (
        <div class="tool-input">
          {str(i.url) ? (
            <p class="tool-path">
              <Link href={String(i.url)}>{String(i.url)}</Link>
            </p>
          ) : (
            <p>“{str(i.query) ?? ''}”</p>
          )}
          {str(i.prompt) && <p class="tool-description">{String(i.prompt)}</p>}
        </div>
      );
    case 'helper':
      return (
        <blockquote class="tool-input tool-prompt">
          {str(i.subagent_type) && <span class="meta">{String(i.subagent_type)} · </span>}
          {str(i.prompt) ?? ''}
        </blockquote>
      );
    case 'plan': {
      const todos = Array.isArray(i.todos) ? i.todos.map(record) : [];
      return (
        <ul class="tool-input todo-list">
          {todos.map((todo, n) => (
            <li key={n} class={`todo todo-${String(todo.status ?? 'pending')}`}>
              <span class="todo-box" aria-hidden="true">
                {todo.status === 'completed' ? '✓' : todo.status === 'in_progress' ? '•' : ''}
              </span>
              <span>
                {String(todo.content ?? '')}
                <span class="visually-hidden"> ({String(todo.status ?? 'pending').replace('_', ' ')})</span>
              </span>
            </li>
          ))}
        </ul>
      );
    }
    case 'question': {
      const questions = Array.isArray(i.questions) ? i.questions.map(record) : [];
      return (
        <div class="tool-input">
          {questions.map((q, n) => (
            <div key={n} class="question">
              <p>{String(q.question ?? '')}</p>
              <ul>
                {(Array.isArray(q.options) ? q.options.map(record) : []).map((o, m) => (
                  <li key={m}>
                    <strong>{String(o.label ?? '')}</strong>
                    {str(o.description) && <span class="meta"> — {String(o.description)}</span>}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </div>
      );
    }
    case 'artifact':
      if (bubbleTool(toolName) === 'write_artifact' && typeof i.content === 'string') {
        const name = str(i.name) ?? '';
        return (
          <div class="tool-input tool-artifact">
            <div class="diff-head">
              <code>{name}</code>
              <span class="meta">{str(i.mediaType) ?? 'text/markdown'}</span>
            </div>
            <FoldedText text={i.content.replace(/\n$/, '')} class="artifact-content" />
          </div>
        );
      }
      return <Arguments value={props.input} />;
    case 'people':
    case 'thread':
    case 'tool':
      return <Arguments value={props.input} />;
  }
}

/** What came back, for a call that is done: formatted for the tool, with Claude Code's notes to the model left out. */
export function ToolOutput(props: { toolName: string; input: unknown; output: unknown; display: ToolDisplay }) {
  const { toolName, output, display } = props;
  const text = outputText(output);
  const bubble = bubbleTool(toolName);
  switch (display.kind) {
    case 'edit':
    case 'plan':
      // The CLI's confirmation ("The file … has been updated") says what the title says.
      return null;
    case 'read': {
      const cleaned = cleanToolText(text ?? '');
      const numbered = numberedLines(cleaned);
      if (numbered === null) return <Output text={cleaned} />;
      const code = numbered.lines.join('\n');
      const language = languageOfPath(display.subjectTitle ?? display.subject ?? '');
      return (
        <FoldedText
          text={code}
          class="tool-output code-output"
          html={highlightCode(code, language)}
          gutterFrom={numbered.first}
        />
      );
    }
    case 'helper': {
      const { report, background } = helperReport(text ?? '');
      if (background)
        return <p class="tool-output tool-note">Working in the background: it reports back here when it is done.</p>;
      return report === '' ? (
        <Output text="" />
      ) : (
        <div class="tool-output tool-report">
          <Markdown source={report} />
        </div>
      );
    }
    case 'question': {
      const answers = [...(text ?? '').matchAll(/"([^"]+)"="([^"]*)"/g)];
      return answers.length === 0 ? (
        <Output text={cleanToolText(text ?? '')} />
      ) : (
        <ul class="tool-output answers">
          {answers.map((m, n) => (
            <li key={n}>
              {m[1]} <strong>{m[2]}</strong>
            </li>
          ))}
        </ul>
      );
    }
    case 'artifact':
      if (bubble === 'write_artifact') return null;
      break;
    case 'thread': {
      const result = outputObject(output);
      if (bubble === 'open_subthread' && typeof result?.threadId === 'string') {
        return (
          <p class="tool-output">
            <SubthreadLink threadId={result.threadId}>Open the subthread</SubthreadLink>
          </p>
        );
      }
      if (bubble === 'browse_thread' && typeof result?.transcript === 'string')
        return <Output text={result.transcript} />;
      break;
    }
    case 'people': {
      const result = outputObject(output);
      if (bubble === 'search_principals' && Array.isArray(result?.principals)) {
        const found = result.principals.map(record);
        return found.length === 0 ? (
          <p class="tool-output tool-empty">Nobody matched.</p>
        ) : (
          <ul class="tool-output found">
            {found.map((p) => (
              <li key={String(p.principalId)}>
                {String(p.displayName ?? p.principalId)} <span class="meta">{String(p.principalId)}</span>
                {p.kind === 'bot' && <span class="bot-badge">bot</span>}
              </li>
            ))}
          </ul>
        );
      }
      if (bubble === 'invite_to_thread') return null;
      break;
    }
    case 'command':
    case 'search':
    case 'web':
    case 'tool':
      break;
  }
  if (text !== null) return <Output text={cleanToolText(text)} />;
  const result = outputObject(output);
  if (result !== null) return <Arguments value={result} />;
  return output === undefined || output === null ? (
    <Output text="" />
  ) : (
    <Output text={JSON.stringify(output, null, 2)} />
  );
}

function Output(props: { text: string }) {
  return props.text === '' ? (
    <p class="tool-output tool-empty">No output</p>
  ) : (
    <FoldedText text={props.text} class="tool-output" />
  );
}

/** The call as the bot sent and got it, behind a fold: drawn only once opened, so its text is not in the page twice. */
export function RawCall(props: { toolName: string; input: unknown; output: unknown; errorText: string | undefined }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="tool-raw" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Raw call</summary>
      {open && (
        <pre class="raw-json">
          {JSON.stringify(
            {
              tool: props.toolName,
              input: props.input,
              ...(props.output !== undefined ? { output: props.output } : {}),
              ...(props.errorText !== undefined ? { error: props.errorText } : {}),
            },
            null,
            2,
          )}
        </pre>
      )}
    </details>
  );
}
