import { useEffect, useState } from 'preact/hooks';
import { describeTool, editDiff, type ToolDisplay, type ToolState, toolStateOf } from '../model/tool-display';
import { exitCode, toolErrorMeaning } from '../model/tool-output-text';
import type { ApprovalRequestView, RunView, ToolPartView } from '../model/thread-model';
import { ApprovalControls, ApprovalOutcome } from './approval-controls';
import { Icon, type IconName } from './icons';
import { navigate, threadPath } from './router';
import type { RunActions } from './run-actions';
import { RawCall, ToolInput, ToolOutput } from './tool-views';

/** "Ran `npm test` (exit 1)": the verb, the subject as code or words, the detail. */
function ToolTitle(props: { display: ToolDisplay; lowerFirst?: boolean }) {
  const { display } = props;
  const verb = props.lowerFirst ? display.verb.charAt(0).toLowerCase() + display.verb.slice(1) : display.verb;
  return (
    <span class="tool-title">
      {verb}
      {display.subject !== undefined && ' '}
      {display.subject !== undefined &&
        (display.subjectIsCode ? (
          <code title={display.subjectTitle}>{display.subject}</code>
        ) : (
          <span class="tool-subject">{display.subject}</span>
        ))}
      {display.detail !== undefined && display.detail !== '' && <span class="tool-detail"> {display.detail}</span>}
    </span>
  );
}

const STATE_ICON: Record<ToolState, IconName> = {
  waiting: 'clock',
  running: 'clock',
  done: 'check',
  failed: 'alert',
  denied: 'cross',
  stopped: 'stop',
  'no-result': 'clock',
};

function stateText(state: ToolState, forMe: boolean, exit: number | undefined): string {
  switch (state) {
    case 'waiting':
      return forMe ? 'Needs your approval' : 'Waiting for approval';
    case 'running':
      return 'Running…';
    case 'done':
      return 'Done';
    case 'failed':
      return exit === undefined ? 'Failed' : `Failed (exit ${exit})`;
    case 'denied':
      return 'Denied';
    case 'stopped':
      return 'Stopped';
    case 'no-result':
      return 'No result';
  }
}

/** Where a call stands, at the end of its line: a word for what needs reading, an icon for "done". */
function ToolStatePill(props: { state: ToolState; forMe: boolean; exit?: number }) {
  const text = stateText(props.state, props.forMe, props.exit);
  return (
    <span class={`tool-state tool-state-${props.state}`}>
      {props.state === 'running' ? (
        <span class="spinner" aria-hidden="true" />
      ) : (
        <Icon name={STATE_ICON[props.state]} />
      )}
      <span class={props.state === 'done' ? 'visually-hidden' : ''}>{text}</span>
    </span>
  );
}

/**
 * One tool call of a run: one line that says what it did ("Edited `src/app.ts` (+12 −3)") and
 * where it stands, folded over what it was given (formatted for what it is) and what came back;
 * the raw JSON sits in a fold of its own. It opens by itself when it waits for someone or leads
 * to a subthread; after that only the reader folds it, so an answered call does not jump shut.
 */
export function ToolCall(props: { tool: ToolPartView; run: RunView; actions: RunActions }) {
  const { tool, run, actions } = props;
  const approval = actions.approval(tool.toolCallId);
  const request = actions.waitingRequest(tool.toolCallId);
  const waiting = request !== undefined;
  const child = run.childThreads[tool.toolCallId];
  const meaning = tool.state === 'output-error' ? toolErrorMeaning(tool.errorText ?? '') : undefined;
  const state = toolStateOf({
    partState: tool.state,
    waiting,
    decision: approval?.decision,
    runStatus: run.status,
    errorKind: meaning?.kind,
  });
  const display = describeTool(tool.toolName, tool.input, state, tool.output);
  // A small edit is what a reader most wants to check: its diff shows without a click.
  const smallEdit = display.kind === 'edit' && (editDiff(tool.toolName, tool.input)?.lines.length ?? 99) <= 16;
  const [open, setOpen] = useState(waiting || child !== undefined || smallEdit);
  useEffect(() => {
    if (waiting || child !== undefined) setOpen(true);
  }, [waiting, child]);
  const forMe = waiting && actions.canApprove(tool.toolCallId);
  const exit = state === 'failed' ? exitCode(tool.errorText ?? '') : undefined;
  return (
    <details
      class={`tool tool-${state}${forMe ? ' tool-for-me' : ''}`}
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
      data-tool-call-id={tool.toolCallId}
      data-state={state}
    >
      <summary>
        <Icon name={display.kind} class="tool-icon" />
        <ToolTitle display={display} /> <ToolStatePill state={state} forMe={forMe} exit={exit} />
      </summary>
      <div class="tool-body">
        <ToolInput toolName={tool.toolName} input={tool.input} display={display} />
        {approval ? (
          <ApprovalOutcome decision={approval.decision} by={approval.by} reason={approval.reason} actions={actions} />
        ) : (
          meaning?.kind === 'refused' && (
            <ApprovalOutcome decision="deny" by={meaning.by} reason={meaning.reason} actions={actions} />
          )
        )}
        {state === 'done' && (
          <ToolOutput toolName={tool.toolName} input={tool.input} output={tool.output} display={display} />
        )}
        {state === 'failed' && meaning?.kind === 'failed' && (
          <pre class="tool-output tool-error">{meaning.text || 'The tool failed and said nothing more.'}</pre>
        )}
        {state === 'stopped' && (
          <p class="tool-output tool-note">Stopped before it finished: it may have run in part.</p>
        )}
        {child !== undefined && (
          <p class="tool-link">
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
        {request !== undefined && (
          <ApprovalControls
            toolCallId={tool.toolCallId}
            toolName={tool.toolName}
            request={request}
            input={tool.input}
            callThreadId={actions.threadId}
            actions={actions}
          />
        )}
        <RawCall toolName={tool.toolName} input={tool.input} output={tool.output} errorText={tool.errorText} />
      </div>
    </details>
  );
}

/** A sub-agent's call waiting for an answer here, on the parent thread: what it wants to run, and where. */
export function SubagentRequest(props: { request: ApprovalRequestView; actions: RunActions }) {
  const { request, actions } = props;
  const approval = actions.approval(request.toolCallId);
  const waiting = actions.waitingRequest(request.toolCallId);
  if (!waiting && !approval) return null;
  const toolName = request.toolName ?? 'tool';
  const state: ToolState = waiting ? 'waiting' : approval?.decision === 'deny' ? 'denied' : 'done';
  const display = describeTool(toolName, request.input, state);
  const forMe = waiting !== undefined && actions.canApprove(request.toolCallId);
  const subthread = request.subthreadId;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a card of related controls, not a form: role=group names it without fieldset semantics
    <div
      class={`approval-request tool tool-${state}${forMe ? ' tool-for-me' : ''}`}
      data-tool-call-id={request.toolCallId}
      role="group"
      aria-label={`A sub-agent's ${toolName} call`}
    >
      <h4 class="approval-request-head">
        <Icon name={display.kind} class="tool-icon" />
        <span>
          A helper <ToolTitle display={display} lowerFirst />
        </span>{' '}
        {waiting && <ToolStatePill state="waiting" forMe={forMe} />}
      </h4>
      <div class="tool-body">
        <ToolInput toolName={toolName} input={request.input} display={display} />
        {subthread !== undefined && (
          <p class="tool-link">
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
        {approval ? (
          <ApprovalOutcome decision={approval.decision} by={approval.by} reason={approval.reason} actions={actions} />
        ) : (
          waiting && (
            <ApprovalControls
              toolCallId={request.toolCallId}
              toolName={toolName}
              request={waiting}
              input={request.input}
              callThreadId={request.subthreadId ?? actions.threadId}
              actions={actions}
            />
          )
        )}
      </div>
    </div>
  );
}
