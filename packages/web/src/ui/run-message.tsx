import { memo } from 'preact/compat';
import { safeHref } from '../markdown';
import { runErrorAdvice } from '../model/run-error-advice';
import { type RunProps, sameRunProps } from '../model/run-props';
import { toolPartOf } from '../model/thread-model';
import { ErrorBoundary } from './error-boundary';
import { Icon } from './icons';
import { Markdown, RawText } from './markdown-view';
import { Avatar, PrincipalName } from './principal-name';
import { ClockTime, TimeAgo } from './time-ago';
import type { RunActions } from './run-actions';
import { SubagentRequest, ToolCall } from './tool-call';

export type { RunActions } from './run-actions';

/** A message's props: `continued` when it sits under the header of the message above (`continuedRuns`). */
export type RunMessageProps = RunProps<RunActions> & { readonly continued?: boolean };

/**
 * One message of the thread. Drawn again only when its props are new objects (`sameRunProps`):
 * a delta streaming into another message leaves this one alone.
 */
export const RunMessage = memo(
  (props: RunMessageProps) => (
    <ErrorBoundary resetKey={props.run} fallback={() => <RawRunMessage {...props} />}>
      <RunMessageView {...props} />
    </ErrorBoundary>
  ),
  (previous: RunMessageProps, next: RunMessageProps) =>
    sameRunProps(previous, next) && previous.continued === next.continued,
);

/** A message that could not be drawn at all: who wrote it and its text as written, so the thread goes on. */
function RawRunMessage(props: RunMessageProps) {
  const { run } = props;
  const text = run.message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n\n');
  return (
    <article
      class="run"
      aria-label={`Message from ${run.principalId}`}
      data-run-id={run.runId}
      data-author={run.principalId}
    >
      <div class="run-gutter" />
      <div class="run-main">
        <header>
          <span class="author">{run.principalId}</span>
        </header>
        <div class="parts">
          <RawText source={text} />
        </div>
      </div>
    </article>
  );
}

function RunMessageView(props: RunMessageProps) {
  const { run, actions } = props;
  const label = actions.labelOf(run.principalId);
  const author = label.text;
  const continued = props.continued === true;
  const parts = run.message.parts;
  const streaming = run.status === 'streaming';
  // The caret follows the last words while they arrive; a run busy with a tool shows the tool's state instead.
  const error = run.error ?? (run.status === 'error' ? { code: 'unknown', message: '' } : undefined);
  const caretAt = streaming && parts[parts.length - 1]?.type === 'text' ? parts.length - 1 : -1;
  return (
    <article
      class={`run ${props.mine ? 'mine' : ''} ${label.isBot ? 'by-bot' : ''} ${continued ? 'continued' : ''} status-${run.status}`}
      aria-label={`Message from ${author}`}
      data-run-id={run.runId}
      data-status={run.status}
      data-author={run.principalId}
    >
      <div class="run-gutter">
        {continued ? <ClockTime iso={run.createdAt} class="gutter-time" /> : <Avatar label={label} />}
      </div>
      <div class="run-main">
        {!continued && (
          <header>
            <span class="author">
              <PrincipalName label={label} strong />
            </span>
            <TimeAgo iso={run.createdAt} />
          </header>
        )}
        {streaming && actions.canWrite && (
          <div class="run-actions">
            <button
              type="button"
              class="stop"
              disabled={run.interruptRequestedBy !== undefined}
              onClick={() => void actions.stop(run.runId)}
              aria-label={`Stop ${author}'s run`}
            >
              <Icon name="stop" />
              <span>{run.interruptRequestedBy !== undefined ? 'Stopping…' : 'Stop'}</span>
            </button>
          </div>
        )}
        {streaming && run.interruptRequestedBy !== undefined && (
          <p class="meta">
            <PrincipalName label={actions.labelOf(run.interruptRequestedBy)} /> asked to stop this run.
          </p>
        )}
        <div class="parts">
          {parts.map((part, i) => {
            if (part.type === 'text') return <Markdown key={i} source={part.text} streaming={i === caretAt} />;
            if (part.type === 'reasoning') {
              return (
                <details key={i} class="reasoning">
                  <summary>{part.state === 'streaming' ? 'Thinking…' : 'Reasoning'}</summary>
                  <p class="reasoning-text">{part.text}</p>
                </details>
              );
            }
            if (part.type === 'file') {
              const href = safeHref(part.url);
              const name = part.filename ?? `File (${part.mediaType})`;
              return (
                <p key={i} class="file">
                  {href === null ? (
                    <span title="not opened: only http, https and mailto links are followed">{name}</span>
                  ) : (
                    <a href={href} target="_blank" rel="noreferrer noopener">
                      {name}
                    </a>
                  )}
                </p>
              );
            }
            const tool = toolPartOf(part);
            if (tool !== null) return <ToolCall key={tool.toolCallId} tool={tool} run={run} actions={actions} />;
            return null;
          })}
          {streaming && parts.length === 0 && (
            <p class="run-pending">
              <span class="dots" aria-hidden="true">
                <span />
                <span />
                <span />
              </span>
              <span class="visually-hidden">Starting…</span>
            </p>
          )}
          {actions.subagentRequests(run.runId).map((request) => (
            <SubagentRequest key={request.toolCallId} request={request} actions={actions} />
          ))}
        </div>
        {run.status === 'interrupted' && (
          <p class="run-end run-stopped">
            <Icon name="stop" />
            <span>
              {run.interruptedBy !== undefined ? (
                <>
                  Stopped by <PrincipalName label={actions.labelOf(run.interruptedBy)} />
                </>
              ) : (
                'Stopped before it finished'
              )}
            </span>
          </p>
        )}
        {error && (
          <div class="run-end run-error" role="alert">
            <p>
              <Icon name="alert" />
              <span>{runErrorAdvice(error, Date.now())}</span>
            </p>
            <details class="run-error-detail">
              <summary>Details</summary>
              <p>{error.message || 'The bot gave no message.'}</p>
              <p class="meta">
                Code <code>{error.code}</code>
              </p>
            </details>
          </div>
        )}
      </div>
    </article>
  );
}
