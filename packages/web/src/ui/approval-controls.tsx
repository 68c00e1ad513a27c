import { useEffect, useState } from 'preact/hooks';
import { exactInput, touchedThreadId } from '../model/approval-target';
import type { ApprovalRequestView } from '../model/thread-model';
import type { PrincipalLabel } from '../model/who-is-who';
import { Icon } from './icons';
import { PrincipalName } from './principal-name';

/** What the approval parts read from the thread view. */
export interface ApprovalActions {
  canApprove(toolCallId: string): boolean;
  answer(toolCallId: string, decision: 'allow' | 'deny', reason?: string): Promise<void>;
  labelOf(principalId: string): PrincipalLabel;
  /** A thread's title as the signed-in person may read it, or null (untitled, or not theirs to see). */
  threadTitle(threadId: string): Promise<string | null>;
}

/** "Approved by alice", or "Denied by alice: reason": the one place a denial's reason is shown. */
export function ApprovalOutcome(props: {
  decision: 'allow' | 'deny';
  by: string | undefined;
  reason: string | undefined;
  actions: Pick<ApprovalActions, 'labelOf'>;
}) {
  const { decision, by, reason, actions } = props;
  const verb = decision === 'allow' ? 'Approved' : 'Denied';
  return (
    <p class={`approval approval-${decision}`} role="status">
      <Icon name={decision === 'allow' ? 'check' : 'cross'} />
      <span>
        {by === undefined ? (
          verb
        ) : (
          <>
            {verb} by <PrincipalName label={actions.labelOf(by)} />
          </>
        )}
        {reason ? `: ${reason}` : ''}
      </span>
    </p>
  );
}

/**
 * While a call waits: Approve and Deny (with an optional reason) for the approvers the bot named,
 * and their names for everyone else.
 */
export function ApprovalControls(props: {
  toolCallId: string;
  toolName: string;
  request: ApprovalRequestView;
  /** The call's input as the bot sent it. */
  input: unknown;
  /** The thread the call runs in (a sub-agent's: its subthread). */
  callThreadId: string;
  actions: ApprovalActions;
}) {
  const { toolCallId, toolName, request, actions } = props;
  const target = <ApprovalTarget input={props.input} callThreadId={props.callThreadId} actions={actions} />;
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
  if (!actions.canApprove(toolCallId)) {
    const names = request.approvers.map((id) => <PrincipalName key={id} label={actions.labelOf(id)} />);
    return (
      <>
        {target}
        <p class="meta waiting-for">
          <Icon name="clock" />{' '}
          <span>
            Waiting for{' '}
            {names.length === 0
              ? 'an approver'
              : names.map((name, i) => [i === 0 ? '' : i === names.length - 1 ? ' or ' : ', ', name])}{' '}
            to approve or deny.
          </span>
        </p>
      </>
    );
  }
  const reasonId = `deny-reason-${toolCallId}`;
  return (
    <>
      {target}
      <form
        class="approve-form"
        aria-label={`Answer the ${toolName} call`}
        onSubmit={(e) => {
          e.preventDefault();
          void act('deny');
        }}
      >
        <button type="button" class="approve primary" disabled={busy} onClick={() => void act('allow')}>
          Approve
        </button>
        <label for={reasonId} class="visually-hidden">
          Reason to deny (optional)
        </label>
        <input
          id={reasonId}
          value={reason}
          placeholder="Reason to deny (optional)"
          autoComplete="off"
          onInput={(e) => setReason(e.currentTarget.value)}
        />
        <button type="submit" class="deny" disabled={busy}>
          Deny
        </button>
      </form>
    </>
  );
}

/**
 * Where the call acts and exactly what it was given: the thread by title and id (a call may name
 * another thread than this one), and the whole input, scrolling rather than cut.
 */
function ApprovalTarget(props: {
  input: unknown;
  callThreadId: string;
  actions: Pick<ApprovalActions, 'threadTitle'>;
}) {
  const threadId = touchedThreadId(props.input, props.callThreadId);
  const [title, setTitle] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    let current = true;
    setTitle(undefined);
    props.actions.threadTitle(threadId).then(
      (t) => current && setTitle(t),
      () => current && setTitle(null),
    );
    return () => {
      current = false;
    };
  }, [threadId]);
  return (
    <div class="approval-target">
      <p class="approval-thread" data-thread-id={threadId}>
        {threadId === props.callThreadId ? 'On this thread: ' : 'On another thread: '}
        <strong>{title === undefined ? '…' : (title ?? 'Untitled')}</strong> <code>{threadId}</code>
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus so a keyboard can scroll it (axe's scrollable-region-focusable) */}
      <section class="approval-input" tabIndex={0} aria-label="The call's exact input">
        <pre>{exactInput(props.input)}</pre>
      </section>
    </div>
  );
}
