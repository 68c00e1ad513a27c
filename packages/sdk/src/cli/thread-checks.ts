import {
  approvalOf,
  approvalRequestOf,
  type IsBot,
  isNamedApprover,
  isToolUIPart,
  requestedToolPart,
  runOf,
  runsOf,
  suppliedResultOf,
  type ThreadState,
  toolCallOf,
} from '../fold/index.js';

/**
 * What `bubble approve`, `deny` and `stop` check on the thread before they write: that the
 * approval request or the run they name exists there and is still open, so a mistyped or stale
 * id is refused in words instead of being appended as an answer nobody waits for. Read from the
 * thread's fold, with its one approver rule. A thread can move between this check and the append
 * (a bot settles the call a moment later); the bot ignores such a late answer.
 */
export type Verdict<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/** The call an id names: a toolCallId, or the `approvalId` of its request. */
function toolCallIdOf(state: ThreadState, id: string): string {
  if (toolCallOf(state, id) !== undefined) return id;
  for (const run of runsOf(state))
    for (const part of run.message.parts) if (isToolUIPart(part) && part.approval?.id === id) return part.toolCallId;
  return id;
}

/**
 * Whether `me` may answer the approval request `id` (a toolCallId, or the request's approvalId)
 * now; the value is the toolCallId to answer. `isBot` says which authors count: only a bot's
 * request is one (protocol.md, "Tool approvals").
 */
export function checkApprovalAnswer(
  state: ThreadState,
  threadId: string,
  id: string,
  me: string,
  isBot: IsBot,
): Verdict<{ toolCallId: string }> {
  const toolCallId = toolCallIdOf(state, id);
  const call = toolCallOf(state, toolCallId);
  const request = approvalRequestOf(state, toolCallId, isBot);
  if (request === undefined) {
    const reason =
      call === undefined
        ? `no tool call ${id} waits for approval on thread ${threadId} (bubble tail ${threadId} shows the calls that wait)`
        : call.requests.length > 0
          ? `tool call ${toolCallId} has no approval request from a bot (only a bot's request can be answered)`
          : `tool call ${toolCallId} did not ask for approval: it ran without asking, so there is nothing to answer`;
    return { ok: false, reason };
  }
  const answer = approvalOf(state, toolCallId, isBot);
  if (answer !== undefined) {
    const verb = answer.decision === 'allow' ? 'approved' : 'denied';
    const why = answer.reason !== undefined && answer.reason !== '' ? `: ${answer.reason}` : '';
    return {
      ok: false,
      reason: `tool call ${toolCallId} was already answered: ${verb} by ${answer.by}${why} (#${answer.seq})`,
    };
  }
  const supplied = suppliedResultOf(state, toolCallId, isBot);
  if (supplied !== undefined)
    return {
      ok: false,
      reason: `tool call ${toolCallId} was already answered: ${supplied.by} supplied its result (#${supplied.seq})`,
    };
  if (requestedToolPart(state, request)?.state.startsWith('output-'))
    return { ok: false, reason: `tool call ${toolCallId} has already ended; it no longer waits for an answer` };
  const run = runOf(state, request.runId);
  if (run !== undefined && run.status !== 'streaming')
    return {
      ok: false,
      reason: `tool call ${toolCallId} no longer waits: its run ${run.runId} ended (${run.status}, #${run.finishedSeq})`,
    };
  if (!isNamedApprover(request, me)) {
    const who = request.approvers.length === 0 ? 'the bot named nobody' : `only ${request.approvers.join(', ')} may`;
    return {
      ok: false,
      reason: `${me} may not answer tool call ${toolCallId}: ${who} (the bot would ignore the answer)`,
    };
  }
  return { ok: true, value: { toolCallId } };
}

/** Whether run `runId` is open on the thread, so that asking it to stop means something. */
export function checkStoppableRun(state: ThreadState, threadId: string, runId: string): Verdict<null> {
  const run = runOf(state, runId);
  if (run === undefined)
    return {
      ok: false,
      reason: `no run ${runId} on thread ${threadId} (a run id is in each run_started; bubble tail ${threadId} shows runs as they stream)`,
    };
  if (run.status !== 'streaming')
    return {
      ok: false,
      reason: `run ${runId} has already ended (${run.status}, #${run.finishedSeq}); there is nothing to stop`,
    };
  return { ok: true, value: null };
}
