import type { EventEnvelope } from '@bubble/protocol';

/**
 * What `bubble approve`, `deny` and `stop` check on the thread before they
 * write: that the approval request or the run they name exists there and is
 * still open, so a mistyped or stale id is refused in words instead of being
 * appended as an answer nobody waits for. Pure: the thread's events in, a
 * verdict out. A thread can move between this check and the append (a bot
 * settles the call a moment later); the bot ignores such a late answer.
 */
export type Verdict<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

interface ChunkView {
  type?: unknown;
  toolCallId?: unknown;
  approvalId?: unknown;
  toolName?: unknown;
  providerMetadata?: { bubble?: { approvers?: unknown } };
}

const chunkOf = (event: EventEnvelope): ChunkView =>
  event.type === 'message_part' && typeof event.data.chunk === 'object' && event.data.chunk !== null
    ? (event.data.chunk as ChunkView)
    : {};

const SETTLED_CHUNKS = new Set(['tool-output-available', 'tool-output-error', 'tool-output-denied']);

function describeAnswer(event: EventEnvelope): string {
  const reason = typeof event.data.reason === 'string' && event.data.reason !== '' ? `: ${event.data.reason}` : '';
  if (event.type === 'tool_call_result') return `${event.principalId} supplied its result (#${event.seq})`;
  return `${event.data.decision === 'allow' ? 'approved' : 'denied'} by ${event.principalId}${reason} (#${event.seq})`;
}

/**
 * Whether `me` may answer the approval request `id` (a toolCallId, or the
 * request's approvalId) now; the value is the toolCallId to answer.
 */
export function checkApprovalAnswer(
  events: readonly EventEnvelope[],
  threadId: string,
  id: string,
  me: string,
): Verdict<{ toolCallId: string }> {
  const request = events.findLast((e) => {
    const chunk = chunkOf(e);
    return chunk.type === 'tool-approval-request' && (chunk.toolCallId === id || chunk.approvalId === id);
  });
  if (request === undefined) {
    const call = events.find((e) => chunkOf(e).type === 'tool-input-available' && chunkOf(e).toolCallId === id);
    return {
      ok: false,
      reason:
        call === undefined
          ? `no tool call ${id} waits for approval on thread ${threadId} (bubble tail ${threadId} shows the calls that wait)`
          : `tool call ${id} did not ask for approval: it ran without asking, so there is nothing to answer`,
    };
  }
  const chunk = chunkOf(request);
  const toolCallId = String(chunk.toolCallId);
  const later = events.filter((e) => e.seq > request.seq);
  const answer = later.find(
    (e) => (e.type === 'tool_call_approval' || e.type === 'tool_call_result') && e.data.toolCallId === toolCallId,
  );
  if (answer !== undefined)
    return { ok: false, reason: `tool call ${toolCallId} was already answered: ${describeAnswer(answer)}` };
  if (later.some((e) => SETTLED_CHUNKS.has(String(chunkOf(e).type)) && chunkOf(e).toolCallId === toolCallId))
    return { ok: false, reason: `tool call ${toolCallId} has already ended; it no longer waits for an answer` };
  const runId = request.data.runId;
  const closed = later.find((e) => e.type === 'run_finished' && e.data.runId === runId);
  if (closed !== undefined)
    return {
      ok: false,
      reason: `tool call ${toolCallId} no longer waits: its run ${String(runId)} ended (${String(closed.data.status)}, #${closed.seq})`,
    };
  const approvers = chunk.providerMetadata?.bubble?.approvers;
  if (Array.isArray(approvers) && approvers.length > 0 && !approvers.includes(me))
    return {
      ok: false,
      reason: `${me} may not answer tool call ${toolCallId}: only ${approvers.join(', ')} may (the bot would ignore the answer)`,
    };
  return { ok: true, value: { toolCallId } };
}

/** Whether run `runId` is open on the thread, so that asking it to stop means something. */
export function checkStoppableRun(events: readonly EventEnvelope[], threadId: string, runId: string): Verdict<null> {
  const started = events.find((e) => e.type === 'run_started' && e.data.runId === runId);
  if (started === undefined)
    return {
      ok: false,
      reason: `no run ${runId} on thread ${threadId} (a run id is in each run_started; bubble tail ${threadId} shows runs as they stream)`,
    };
  const finished = events.find((e) => e.type === 'run_finished' && e.data.runId === runId);
  if (finished !== undefined)
    return {
      ok: false,
      reason: `run ${runId} has already ended (${String(finished.data.status)}, #${finished.seq}); there is nothing to stop`,
    };
  return { ok: true, value: null };
}
