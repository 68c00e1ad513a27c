import { memo } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { renderMarkdown, safeHref } from '../markdown';
import { type RunProps, sameRunProps } from '../model/run-props';
import {
  toolPartOf,
  type ApprovalRequestView,
  type ApprovalView,
  type RunView,
  type ToolPartView,
} from '../model/thread-model';
import type { PrincipalLabel } from '../model/who-is-who';
import { Avatar, PrincipalName } from './principal-name';
import { navigate, threadPath } from './router';

export interface RunActions {
  /** Whether the signed-in person gets Approve and Deny for this call: the fold's `mayApprove`, never guessed. */
  canApprove(toolCallId: string): boolean;
  /** Whether the signed-in person may append here (own grant): Stop needs it. */
  canWrite: boolean;
  approval(toolCallId: string): ApprovalView | undefined;
  /** The bot's request for this call while it still waits for an answer. */
  waitingRequest(toolCallId: string): ApprovalRequestView | undefined;
  /** Requests for calls of the run's sub-agents (the calls themselves are on subthreads). */
  subagentRequests(runId: string): ApprovalRequestView[];
  answer(toolCallId: string, decision: 'allow' | 'deny', reason?: string): Promise<void>;
  stop(runId: string): Promise<void>;
  /** A name as one line of text: with the id when another participant shares the name. */
  nameOf(principalId: string): string;
  /** The same, with whether it is a bot, for headers that show a badge. */
  labelOf(principalId: string): PrincipalLabel;
}

const STATUS_LABEL: Record<RunView['status'], string> = {
  streaming: 'writing…',
  completed: '',
  interrupted: 'stopped',
  error: 'failed',
};

/**
 * One message of the thread. Drawn again only when its props are new objects (`sameRunProps`):
 * a delta streaming into another message leaves this one alone.
 */
export const RunMessage = memo(RunMessageView, sameRunProps);

function RunMessageView(props: RunProps<RunActions>) {
  const { run, actions } = props;
  const label = actions.labelOf(run.principalId);
  const author = label.text;
  return (
    <article
      class={`run ${props.mine ? 'mine' : ''} ${label.isBot ? 'by-bot' : ''} status-${run.status}`}
      aria-label={`Message from ${author}`}
      data-run-id={run.runId}
      data-status={run.status}
      data-author={run.principalId}
    >
      <Avatar label={label} />
      <div class="run-main">
        <header>
          <span class="author">
            <PrincipalName label={label} strong />
          </span>
          <time dateTime={run.createdAt}>{new Date(run.createdAt).toLocaleTimeString()}</time>
          {STATUS_LABEL[run.status] !== '' && <span class="status">{STATUS_LABEL[run.status]}</span>}
          {run.status === 'streaming' && actions.canWrite && (
            <button
              type="button"
              class="stop"
              disabled={run.interruptRequestedBy !== undefined}
              onClick={() => void actions.stop(run.runId)}
              aria-label={`Stop ${author}'s run`}
            >
              {run.interruptRequestedBy !== undefined ? 'Stopping…' : 'Stop'}
            </button>
          )}
        </header>
        {run.interruptRequestedBy !== undefined && (
          <p class="meta">
            <PrincipalName label={actions.labelOf(run.interruptRequestedBy)} /> asked to stop this run.
          </p>
        )}
        <div class="parts">
          {run.message.parts.map((part, i) => {
            if (part.type === 'text')
              return <div key={i} class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(part.text) }} />;
            if (part.type === 'reasoning') {
              return (
                <details key={i} class="reasoning">
                  <summary>Reasoning</summary>
                  <p class="reasoning-text">{part.text}</p>
                </details>
              );
            }
            if (part.type === 'file') {
              const href = safeHref(part.url);
              const label = part.filename ?? `File (${part.mediaType})`;
              return (
                <p key={i} class="file">
                  {href === null ? (
                    <span title="not opened: only http, https and mailto links are followed">{label}</span>
                  ) : (
                    <a href={href} target="_blank" rel="noreferrer noopener">
                      {label}
                    </a>
                  )}
                </p>
              );
            }
            const tool = toolPartOf(part);
            if (tool !== null) return <ToolCall key={tool.toolCallId} tool={tool} run={run} actions={actions} />;
            return null;
          })}
          {actions.subagentRequests(run.runId).map((request) => (
            <SubagentRequest key={request.toolCallId} request={request} actions={actions} />
          ))}
        </div>
        {run.error && (
          <p class="error" role="alert">
            {run.error.message || run.error.code}
          </p>
        )}
      </div>
    </article>
  );
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (
    Array.isArray(value) &&
    value.every((v) => typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'text')
  ) {
    return value.map((v) => String((v as { text?: unknown }).text ?? '')).join('\n');
  }
  return JSON.stringify(value, null, 2) ?? '';
}

function ToolCall(props: { tool: ToolPartView; run: RunView; actions: RunActions }) {
  const { tool, run, actions } = props;
  const approval = actions.approval(tool.toolCallId);
  const request = actions.waitingRequest(tool.toolCallId);
  const waiting = request !== undefined;
  const child = run.childThreads[tool.toolCallId];
  // Opens by itself when it needs someone (an answer) or leads somewhere (a subthread);
  // after that only the reader folds it, so an answered call does not jump shut.
  const [open, setOpen] = useState(waiting || child !== undefined);
  useEffect(() => {
    if (waiting || child !== undefined) setOpen(true);
  }, [waiting, child]);
  const state =
    tool.state === 'output-available'
      ? 'done'
      : tool.state === 'output-error'
        ? 'failed'
        : tool.state === 'output-denied'
          ? 'denied'
          : waiting
            ? 'waiting for approval'
            : run.status === 'streaming'
              ? 'running'
              : 'no result';
  return (
    <details
      class={`tool tool-${state.replace(/ /g, '-')}`}
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
      data-tool-call-id={tool.toolCallId}
    >
      <summary>
        <span class="tool-name">{tool.toolName}</span> <span class="tool-state">{state}</span>
      </summary>
      <div class="tool-body">
        <h4>Input</h4>
        <pre class="tool-input">{formatValue(tool.input)}</pre>
        {tool.state === 'output-available' && (
          <>
            <h4>Output</h4>
            <pre class="tool-output">{formatValue(tool.output)}</pre>
          </>
        )}
        {tool.state === 'output-error' && (
          <>
            <h4>Error</h4>
            <pre class="tool-output tool-error">{tool.errorText}</pre>
          </>
        )}
        {child !== undefined && (
          <p>
            <a
              href={threadPath(child)}
              class="subthread-link"
              onClick={(e) => {
                e.preventDefault();
                navigate(threadPath(child));
              }}
            >
              Open the sub-agent's subthread
            </a>
          </p>
        )}
        <ApprovalControls
          toolCallId={tool.toolCallId}
          toolName={tool.toolName}
          approval={approval}
          request={request}
          actions={actions}
        />
      </div>
    </details>
  );
}

/** A sub-agent's call waiting for an answer here, on the parent thread: what it wants to run, and where. */
function SubagentRequest(props: { request: ApprovalRequestView; actions: RunActions }) {
  const { request, actions } = props;
  const approval = actions.approval(request.toolCallId);
  const waiting = actions.waitingRequest(request.toolCallId);
  if (!waiting && !approval) return null;
  const subthread = request.subthreadId;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a card of related controls, not a form: role=group names it without fieldset semantics
    <div
      class="approval-request"
      data-tool-call-id={request.toolCallId}
      role="group"
      aria-label={`A sub-agent's ${request.toolName ?? 'tool'} call`}
    >
      <h4>
        A sub-agent wants to run <span class="tool-name">{request.toolName}</span>
      </h4>
      <pre class="tool-input">{formatValue(request.input)}</pre>
      {subthread !== undefined && (
        <p>
          <a
            href={threadPath(subthread)}
            class="subthread-link"
            onClick={(e) => {
              e.preventDefault();
              navigate(threadPath(subthread));
            }}
          >
            Open the sub-agent's subthread
          </a>
        </p>
      )}
      <ApprovalControls
        toolCallId={request.toolCallId}
        toolName={request.toolName ?? 'tool'}
        approval={approval}
        request={waiting}
        actions={actions}
      />
    </div>
  );
}

/**
 * The answer to a parked call: who answered, or, while it waits, Approve and
 * Deny for the approvers the bot named, and their names for everyone else.
 */
function ApprovalControls(props: {
  toolCallId: string;
  toolName: string;
  approval: ApprovalView | undefined;
  request: ApprovalRequestView | undefined;
  actions: RunActions;
}) {
  const { toolCallId, toolName, approval, request, actions } = props;
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const act = async (decision: 'allow' | 'deny') => {
    setBusy(true);
    try {
      await actions.answer(toolCallId, decision, decision === 'deny' ? reason.trim() : undefined);
    } finally {
      setBusy(false);
    }
  };
  const reasonId = `deny-reason-${toolCallId}`;
  if (approval) {
    return (
      <p class={`approval approval-${approval.decision}`} role="status">
        {approval.decision === 'allow' ? 'Approved' : 'Denied'} by{' '}
        <PrincipalName label={actions.labelOf(approval.by)} />
        {approval.reason ? `: ${approval.reason}` : ''}
      </p>
    );
  }
  if (request === undefined) return null;
  if (!actions.canApprove(toolCallId)) {
    const names = request.approvers.map((id) => <PrincipalName key={id} label={actions.labelOf(id)} />);
    return (
      <p class="meta waiting-for">
        Waiting for{' '}
        {names.length === 0
          ? 'an approver'
          : names.map((name, i) => [i === 0 ? '' : i === names.length - 1 ? ' or ' : ', ', name])}{' '}
        to approve or deny.
      </p>
    );
  }
  return (
    <form
      class="approve-form"
      aria-label={`Answer the ${toolName} call`}
      onSubmit={(e) => {
        e.preventDefault();
        void act('deny');
      }}
    >
      <button type="button" class="approve" disabled={busy} onClick={() => void act('allow')}>
        Approve
      </button>
      <label for={reasonId}>Reason to deny (optional)</label>
      <input id={reasonId} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <button type="submit" class="deny" disabled={busy}>
        Deny
      </button>
    </form>
  );
}
