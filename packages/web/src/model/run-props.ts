import { type Participant, type RunState, type ThreadState, type ToolCallState, toolCallsOf } from '@bubble/sdk/client';

/**
 * What one message of the thread view is drawn from. The fold shares every run an event does
 * not touch, so a message is drawn again only when one of these is a new object: its run, the
 * tool calls it shows or carries requests for (answers live there, not in the run), the live
 * grants (who may approve), or the view's actions (they change with the names shown).
 */
export interface RunProps<Actions> {
  readonly run: RunState;
  readonly mine: boolean;
  readonly calls: readonly ToolCallState[];
  readonly participants: Readonly<Record<string, Participant>>;
  readonly actions: Actions;
}

const NO_CALLS: readonly ToolCallState[] = Object.freeze([]);

/** The tool calls each run shows (its tool parts) or carries requests for, by run id. */
export function callsByRun(state: ThreadState): ReadonlyMap<string, readonly ToolCallState[]> {
  const byRun = new Map<string, ToolCallState[]>();
  const add = (runId: string, call: ToolCallState) => {
    const calls = byRun.get(runId);
    if (calls === undefined) byRun.set(runId, [call]);
    else if (!calls.includes(call)) calls.push(call);
  };
  for (const call of toolCallsOf(state)) {
    if (call.runId !== undefined) add(call.runId, call);
    for (const request of call.requests) add(request.runId, call);
  }
  return byRun;
}

export function callsOf(byRun: ReadonlyMap<string, readonly ToolCallState[]>, runId: string): readonly ToolCallState[] {
  return byRun.get(runId) ?? NO_CALLS;
}

/** Whether a message would be drawn the same: the comparison for `memo`. */
export function sameRunProps<Actions>(previous: RunProps<Actions>, next: RunProps<Actions>): boolean {
  return (
    previous.run === next.run &&
    previous.mine === next.mine &&
    previous.participants === next.participants &&
    previous.actions === next.actions &&
    previous.calls.length === next.calls.length &&
    previous.calls.every((call, i) => call === next.calls[i])
  );
}
