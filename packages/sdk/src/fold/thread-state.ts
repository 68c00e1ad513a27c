import type { AgentSettingsValues, EventParseError, Role, RunError, RunUsage } from '@bubble/protocol';
import { type MessageAssembly, own } from './assembly-state.js';
import { emptyList, listGet, listItems, type PersistentList } from './persistent-list.js';
import { emptyMap, mapGet, type PersistentMap } from './persistent-map.js';

/** A run as the thread shows it: still streaming until its `run_finished`. */
export type ThreadRunStatus = 'streaming' | 'completed' | 'interrupted' | 'error';

/**
 * One run: a turn of one principal (a person's message is a run too), its chunks assembled into
 * one `UIMessage` (`message`, with the assembly's bookkeeping beside it: `partSeqs` says which
 * seq added each part). Runs are keyed by `runId`: protocol.md gives a run id to the first principal
 * that uses it on a thread, so another principal's event under that id is not folded into it.
 */
export interface RunState extends MessageAssembly {
  readonly runId: string;
  readonly principalId: string;
  readonly firstSeq: number;
  readonly createdAt: string;
  /** Opened by `run_started`; false for a bare-delta turn, whose parts count as final as they land. */
  readonly started: boolean;
  /** The seqs its `run_started` answers. */
  readonly replyTo: readonly number[];
  readonly status: ThreadRunStatus;
  readonly finishedSeq?: number;
  readonly error?: RunError;
  /** Who ended it, by their `run_interrupt_requested` (from its `run_finished`). */
  readonly interruptedBy?: string;
  readonly interruptReason?: string;
  readonly usage?: RunUsage;
  /** The first participant who asked it to stop, while it ran. */
  readonly interruptRequestedBy?: string;
  /** Tool calls that run in a subthread: toolCallId → the subthread's id. */
  readonly childThreads: Readonly<Record<string, string>>;
}

/**
 * A parked tool call announced by a bot's `tool-approval-request` chunk (protocol.md, "Tool
 * approvals"): only these get Approve and Deny, and only for the principals it names.
 */
export interface ApprovalRequest {
  readonly toolCallId: string;
  /** Who asked: the author of the run that carries the request. */
  readonly by: string;
  /** The run on this thread that carries the request. */
  readonly runId: string;
  readonly seq: number;
  readonly approvers: readonly string[];
  /** A sub-agent's call: the subthread it is shown on, and what it wants to run. */
  readonly subthreadId?: string;
  readonly toolName?: string;
  readonly input?: unknown;
}

/** A `tool_call_approval`: whether it counts is decided when read (see `answerCounts`). */
export interface ApprovalAnswer {
  readonly toolCallId: string;
  readonly decision: 'allow' | 'deny';
  readonly reason?: string;
  readonly by: string;
  readonly seq: number;
}

/** A `tool_call_result`: a participant's output in the tool's place. */
export interface SuppliedResult {
  readonly by: string;
  readonly isError: boolean;
  readonly seq: number;
  readonly output: unknown;
}

export interface ToolCallState {
  readonly toolCallId: string;
  /** The run whose message has the call's tool part. */
  readonly runId?: string;
  readonly toolName?: string;
  /** Where the call runs, when a subthread carries it (`providerMetadata.bubble.childThreadId`). */
  readonly childThreadId?: string;
  /** Each author's first request for the call, in seq order. */
  readonly requests: readonly ApprovalRequest[];
  /** Every answer, in seq order. */
  readonly answers: readonly ApprovalAnswer[];
  readonly results: readonly SuppliedResult[];
}

export interface Participant {
  readonly principalId: string;
  readonly role: Role;
  readonly by: string;
  /** The seq of the `participant_added` that made the grant. */
  readonly joinedSeq: number;
}

export interface ArtifactState {
  readonly name: string;
  /** The latest version announced. */
  readonly version: number;
  readonly mediaType: string;
  readonly by: string;
  readonly seq: number;
  readonly updatedAt: string;
  /** Every version announced, in seq order. */
  readonly versions: readonly number[];
}

/** Membership, artifact writes, settings, fresh starts and files, in the timeline between messages. */
export type ThreadNotice =
  | {
      readonly type: 'participant_added' | 'participant_removed';
      readonly principalId: string;
      readonly role: Role;
      readonly by: string;
    }
  | {
      readonly type: 'artifact_updated';
      readonly name: string;
      readonly version: number;
      readonly mediaType: string;
      readonly by: string;
    }
  | {
      /** Someone asked the bot `target` for other settings on this thread (the bot answers whether it applies them). */
      readonly type: 'agent_settings';
      readonly target: string;
      /** The person who asked: the author, or `requestedBy` when the bot recorded a chat command. */
      readonly by: string;
      readonly settings: AgentSettingsValues;
    }
  | { readonly type: 'context_reset'; readonly target: string; readonly by: string }
  | {
      readonly type: 'file_added';
      readonly fileId: string;
      readonly name: string;
      readonly mediaType: string;
      readonly size: number;
      readonly by: string;
    };

export type TimelineItem =
  | { readonly kind: 'run'; readonly runId: string; readonly seq: number }
  | { readonly kind: 'notice'; readonly seq: number; readonly notice: ThreadNotice };

/**
 * A thread folded from its events: plain, immutable data. Each collection that grows with the
 * thread is a persistent list (`persistent-list.ts`) with a persistent map as its index
 * (`persistent-map.ts`), so an event touching one run copies a chunk and a short path, not an
 * array or a record of every run. Read them with `runsOf`, `runOf`, `toolCallsOf`,
 * `toolCallOf`, `timelineOf`; `threadSnapshot` gives the whole state as plain arrays and records.
 */
export interface ThreadState {
  /** The seq of the last event folded; an event at or below it is a replay and changes nothing. */
  readonly lastSeq: number;
  /** In order of their first event. */
  readonly runs: PersistentList<RunState>;
  readonly runIndex: PersistentMap<number>;
  readonly timeline: PersistentList<TimelineItem>;
  /** In order of first mention. */
  readonly toolCalls: PersistentList<ToolCallState>;
  readonly toolCallIndex: PersistentMap<number>;
  /** Live grants, by principal id. */
  readonly participants: Readonly<Record<string, Participant>>;
  /** From `presence` frames (and `online` in a participants listing), by principal id. */
  readonly presence: Readonly<Record<string, boolean>>;
  readonly artifacts: Readonly<Record<string, ArtifactState>>;
  /** Events that could not be read (a known type with broken data, an undotted unknown type): skipped. */
  readonly skipped: readonly EventParseError[];
}

export function emptyThreadState(): ThreadState {
  return {
    lastSeq: 0,
    runs: emptyList(),
    runIndex: emptyMap(),
    timeline: emptyList(),
    toolCalls: emptyList(),
    toolCallIndex: emptyMap(),
    participants: {},
    presence: {},
    artifacts: {},
    skipped: [],
  };
}

export function runOf(state: ThreadState, runId: string): RunState | undefined {
  const index = runIndexOf(state, runId);
  return index === undefined ? undefined : listGet(state.runs, index);
}

/** Where a run is in `runs`. Most events are about the run opened last, so that one is tried before the index. */
export function runIndexOf(state: ThreadState, runId: string): number | undefined {
  const last = state.runs.length - 1;
  return listGet(state.runs, last)?.runId === runId ? last : mapGet(state.runIndex, runId);
}

export function toolCallOf(state: ThreadState, toolCallId: string): ToolCallState | undefined {
  const index = mapGet(state.toolCallIndex, toolCallId);
  return index === undefined ? undefined : listGet(state.toolCalls, index);
}

export function participantOf(state: ThreadState, principalId: string): Participant | undefined {
  return own(state.participants, principalId);
}

export function artifactOf(state: ThreadState, name: string): ArtifactState | undefined {
  return own(state.artifacts, name);
}

export function isOnline(state: ThreadState, principalId: string): boolean {
  return own(state.presence, principalId) === true;
}

/** Every run, in order of its first event. */
export function runsOf(state: ThreadState): readonly RunState[] {
  return listItems(state.runs);
}

/** Every tool call, in order of first mention. */
export function toolCallsOf(state: ThreadState): readonly ToolCallState[] {
  return listItems(state.toolCalls);
}

/** Runs and notices, in seq order. */
export function timelineOf(state: ThreadState): readonly TimelineItem[] {
  return listItems(state.timeline);
}

/** The state as plain arrays and records (no indexes): for snapshots, logs and tests. */
export interface ThreadSnapshot {
  readonly lastSeq: number;
  readonly runs: readonly RunState[];
  readonly timeline: readonly TimelineItem[];
  readonly toolCalls: readonly ToolCallState[];
  readonly participants: ThreadState['participants'];
  readonly presence: ThreadState['presence'];
  readonly artifacts: ThreadState['artifacts'];
  readonly skipped: ThreadState['skipped'];
}

export function threadSnapshot(state: ThreadState): ThreadSnapshot {
  const { lastSeq, participants, presence, artifacts, skipped } = state;
  const runs = runsOf(state);
  return {
    lastSeq,
    runs,
    timeline: timelineOf(state),
    toolCalls: toolCallsOf(state),
    participants,
    presence,
    artifacts,
    skipped,
  };
}
