import { controlNotice } from './notice-text.js';
import {
  type CustomThreadEvent,
  type EventEnvelope,
  parseEvent,
  type ThreadEvent,
  type ThreadEventOf,
} from '@bubble/protocol';
import { answerCounts } from './approver-rule.js';
import { emptyAssembly, isRecord, own, stringOf, withEntry, withoutEntry } from './assembly-state.js';
import { applyChunk } from './message-assembly.js';
import { listGet, listPush, listSet } from './persistent-list.js';
import { mapGet, mapSet } from './persistent-map.js';
import {
  emptyThreadState,
  type RunState,
  runIndexOf,
  runOf,
  type ThreadNotice,
  type ThreadState,
  type ToolCallState,
  toolCallOf,
} from './thread-state.js';
import { isToolUIPart } from './ui-message.js';

/**
 * The one fold of a thread, every client's: `foldThread(state, event)` is the state after one
 * more event. Pure and immutable: the state given is never changed, and what an event does not
 * touch stays the same object in the next state (a UI skips every message that is `===` the one
 * it rendered). Events must come in seq order, as every reader gets them; one at or below the
 * last folded seq is a replay (a resubscribe overlapping what was read) and changes nothing.
 * An event that cannot be read is recorded in `skipped` and otherwise ignored.
 */
export function foldThread(state: ThreadState, envelope: EventEnvelope): ThreadState {
  if (envelope.seq <= state.lastSeq) return state;
  const parsed = parseEvent(envelope);
  if (!parsed.ok) return { ...state, lastSeq: envelope.seq, skipped: [...state.skipped, parsed.error] };
  return foldTypedEvent(state, parsed.event);
}

/** `foldThread` for an event already read by `parseEvent` (a view that switches on it too need not read it twice). */
export function foldTypedEvent(state: ThreadState, event: ThreadEvent): ThreadState {
  if (event.seq <= state.lastSeq) return state;
  // Each transition builds the next state once, with its `lastSeq`; only an event that changes nothing needs a copy.
  const next = applyEvent(state, event);
  return next === state ? { ...state, lastSeq: event.seq } : next;
}

/** Folds events in order, from nothing or from a state already folded (a later page, a resumed prefix). */
export function foldEvents(events: Iterable<EventEnvelope>, from: ThreadState = emptyThreadState()): ThreadState {
  let state = from;
  for (const event of events) state = foldThread(state, event);
  return state;
}

/** A `presence` frame of a thread subscription: a participant came online or went offline. */
export interface PresenceChange {
  readonly principalId: string;
  readonly online: boolean;
}

/** Presence is not an event (it has no seq): it is folded in as it is told, in any order against events. */
export function foldPresence(state: ThreadState, change: PresenceChange): ThreadState {
  if (own(state.presence, change.principalId) === change.online) return state;
  return { ...state, presence: withEntry(state.presence, change.principalId, change.online) };
}

function applyEvent(state: ThreadState, event: ThreadEvent): ThreadState {
  switch (event.type) {
    case 'run_started': {
      const run = runOf(state, event.data.runId);
      if (run === undefined)
        return addRun(state, event.seq, newRun(event.data.runId, event, true, event.data.replyTo ?? []));
      // A bare-delta turn that a run_started opens after all: not possible on a server that keeps protocol.md.
      if (run.principalId !== event.principalId || run.started) return state;
      return setRun(state, event.seq, { ...run, started: true, replyTo: event.data.replyTo ?? [] });
    }
    case 'message_part':
      return foldPart(state, event);
    case 'run_finished': {
      const { runId, status, error, interruptedBy, interruptReason, usage } = event.data;
      let next = state;
      let run = runOf(next, runId);
      if (run === undefined) {
        run = newRun(runId, event, false, []);
        next = addRun(next, event.seq, run);
      }
      if (run.principalId !== event.principalId || run.status !== 'streaming') return next;
      return setRun(next, event.seq, {
        ...run,
        status,
        finishedSeq: event.seq,
        error,
        interruptedBy,
        interruptReason,
        usage,
      });
    }
    case 'run_interrupt_requested': {
      const run = runOf(state, event.data.runId);
      if (run === undefined || run.status !== 'streaming' || run.interruptRequestedBy !== undefined) return state;
      return setRun(state, event.seq, { ...run, interruptRequestedBy: event.principalId });
    }
    case 'tool_call_approval':
      return foldApproval(state, event);
    case 'tool_call_result': {
      const { toolCallId, output, isError } = event.data;
      const result = { by: event.principalId, isError: isError === true, seq: event.seq, output };
      return upsertToolCall(state, event.seq, toolCallId, (call) => ({ ...call, results: [...call.results, result] }));
    }
    case 'participant_added':
    case 'participant_removed': {
      const { principalId, role, by } = event.data;
      const participants =
        event.type === 'participant_added'
          ? withEntry(state.participants, principalId, { principalId, role, by, joinedSeq: event.seq })
          : withoutEntry(state.participants, principalId);
      return addNotice({ ...state, participants }, event.seq, { type: event.type, principalId, role, by });
    }
    case 'artifact_updated': {
      const { name, version, mediaType, by } = event.data;
      const earlier = own(state.artifacts, name);
      const versions = [...(earlier?.versions ?? []), version];
      // Versions only grow; an announcement of an older one (out of order) keeps the latest.
      const latest =
        earlier !== undefined && earlier.version > version
          ? { ...earlier, versions }
          : { name, version, mediaType, by, seq: event.seq, updatedAt: event.createdAt, versions };
      const artifacts = withEntry(state.artifacts, name, latest);
      return addNotice({ ...state, artifacts }, event.seq, { type: 'artifact_updated', name, version, mediaType, by });
    }
    case 'agent_settings':
    case 'context_reset':
    case 'file_added':
      return addNotice(state, event.seq, controlNotice(event));
    default: {
      // A custom event (`acme.poll_created`): an extension's business, nothing of the thread's shape.
      // A new known type fails this assignment at compile time.
      const custom: CustomThreadEvent = event;
      void custom;
      return state;
    }
  }
}

function foldPart(state: ThreadState, event: ThreadEventOf<'message_part'>): ThreadState {
  const { runId, chunk } = event.data;
  let next = state;
  let run = runOf(next, runId);
  if (run === undefined) {
    run = newRun(runId, event, false, []);
    next = addRun(next, event.seq, run);
  }
  // Another principal's part under this run id, or a part after the run closed: the server refuses both.
  if (run.principalId !== event.principalId || run.status !== 'streaming') return next;
  let assembled = applyChunk(run, chunk, event.seq);
  const bubble = bubbleMetadataOf(chunk.providerMetadata);
  if (chunk.type === 'tool-input-available') {
    const child = stringOf(bubble?.childThreadId);
    if (child !== undefined)
      assembled = { ...assembled, childThreads: withEntry(assembled.childThreads, chunk.toolCallId, child) };
  }
  if (assembled !== run) next = setRun(next, event.seq, assembled);
  switch (chunk.type) {
    case 'tool-input-start':
    case 'tool-input-available':
    case 'tool-input-error': {
      const childThreadId = stringOf(bubble?.childThreadId);
      return upsertToolCall(next, event.seq, chunk.toolCallId, (call) => {
        if (call.runId !== undefined && (childThreadId === undefined || call.childThreadId === childThreadId))
          return call;
        return {
          ...call,
          runId: call.runId ?? runId,
          toolName: call.toolName ?? chunk.toolName,
          ...(childThreadId !== undefined ? { childThreadId } : {}),
        };
      });
    }
    case 'tool-approval-request': {
      const approvers = Array.isArray(bubble?.approvers)
        ? bubble.approvers.filter((id): id is string => typeof id === 'string')
        : [];
      const subthreadId = stringOf(bubble?.threadId);
      const toolName = stringOf(bubble?.toolName);
      const request = {
        toolCallId: chunk.toolCallId,
        by: event.principalId,
        runId,
        seq: event.seq,
        approvers,
        ...(subthreadId !== undefined ? { subthreadId } : {}),
        ...(toolName !== undefined ? { toolName, input: bubble?.input } : {}),
      };
      // Each author's first request is kept; which one counts is decided when read (`approvalRequestOf`).
      return upsertToolCall(next, event.seq, chunk.toolCallId, (call) =>
        call.requests.some((earlier) => earlier.by === request.by)
          ? call
          : { ...call, requests: [...call.requests, request] },
      );
    }
    default:
      return next;
  }
}

/**
 * Records an answer, and moves the call's tool part from `approval-requested` to
 * `approval-responded` when the answer counts for the request in that part's own run (the run's
 * author asked there, so a participant's own run cannot claim another's call).
 */
function foldApproval(state: ThreadState, event: ThreadEventOf<'tool_call_approval'>): ThreadState {
  const { toolCallId, decision, reason } = event.data;
  const answer = {
    toolCallId,
    decision,
    by: event.principalId,
    seq: event.seq,
    ...(reason !== undefined && reason !== '' ? { reason } : {}),
  };
  const next = upsertToolCall(state, event.seq, toolCallId, (call) => ({
    ...call,
    answers: [...call.answers, answer],
  }));
  const call = toolCallOf(next, toolCallId);
  const run = call?.runId === undefined ? undefined : runOf(next, call.runId);
  if (call === undefined || run === undefined) return next;
  const request = call.requests.find((r) => r.runId === run.runId);
  if (request === undefined || !answerCounts(request, event.principalId)) return next;
  const index = run.message.parts.findIndex(
    (part) => isToolUIPart(part) && part.toolCallId === toolCallId && part.state === 'approval-requested',
  );
  const part = run.message.parts[index];
  if (part === undefined || !isToolUIPart(part) || part.approval === undefined) return next;
  const approval = { ...part.approval, approved: decision === 'allow', ...(answer.reason ? { reason } : {}) };
  const parts = run.message.parts.slice();
  parts[index] = { ...part, state: 'approval-responded', approval };
  return setRun(next, event.seq, { ...run, message: { ...run.message, parts } });
}

function newRun(runId: string, event: ThreadEvent, started: boolean, replyTo: readonly number[]): RunState {
  const { message, partSeqs, activeText, activeReasoning, partialToolCalls, chunkErrors } = emptyAssembly(runId);
  return {
    runId,
    principalId: event.principalId,
    firstSeq: event.seq,
    createdAt: event.createdAt,
    started,
    replyTo,
    status: 'streaming',
    // Every field present from the start, so all runs share one shape (an optional one stays undefined).
    finishedSeq: undefined,
    error: undefined,
    interruptedBy: undefined,
    interruptReason: undefined,
    usage: undefined,
    interruptRequestedBy: undefined,
    childThreads: {},
    finishReason: undefined,
    message,
    partSeqs,
    activeText,
    activeReasoning,
    partialToolCalls,
    chunkErrors,
  };
}

function addRun(state: ThreadState, seq: number, run: RunState): ThreadState {
  return {
    ...state,
    lastSeq: seq,
    runs: listPush(state.runs, run),
    runIndex: mapSet(state.runIndex, run.runId, state.runs.length),
    timeline: listPush(state.timeline, { kind: 'run', runId: run.runId, seq: run.firstSeq }),
  };
}

function setRun(state: ThreadState, seq: number, run: RunState): ThreadState {
  const index = runIndexOf(state, run.runId);
  if (index === undefined) return addRun(state, seq, run);
  return { ...state, lastSeq: seq, runs: listSet(state.runs, index, run) };
}

function addNotice(state: ThreadState, seq: number, notice: ThreadNotice): ThreadState {
  return { ...state, lastSeq: seq, timeline: listPush(state.timeline, { kind: 'notice', seq, notice }) };
}

/** Changes one tool call (made empty first when new); returning the same call leaves the state as it was. */
function upsertToolCall(
  state: ThreadState,
  seq: number,
  toolCallId: string,
  change: (call: ToolCallState) => ToolCallState,
): ThreadState {
  const index = mapGet(state.toolCallIndex, toolCallId);
  if (index === undefined) {
    const call = change({ toolCallId, requests: [], answers: [], results: [] });
    return {
      ...state,
      lastSeq: seq,
      toolCalls: listPush(state.toolCalls, call),
      toolCallIndex: mapSet(state.toolCallIndex, toolCallId, state.toolCalls.length),
    };
  }
  const previous = listGet(state.toolCalls, index)!;
  const call = change(previous);
  return call === previous ? state : { ...state, lastSeq: seq, toolCalls: listSet(state.toolCalls, index, call) };
}

/** `providerMetadata.bubble`, where Bubble's own facts about a chunk travel. */
function bubbleMetadataOf(metadata: unknown): Readonly<Record<string, unknown>> | undefined {
  if (!isRecord(metadata)) return undefined;
  const bubble = metadata.bubble;
  return isRecord(bubble) ? bubble : undefined;
}
