import type { EventEnvelope } from '@bubble/protocol';
import {
  type ApprovalAnswer,
  type ApprovalRequest,
  approvalOf,
  approvalRequestOf,
  emptyThreadState,
  foldThread,
  isToolUIPart,
  mayApprove,
  type RunState,
  runOf,
  runsOf,
  type SuppliedResult,
  subagentRequests,
  suppliedResultOf,
  type ThreadState,
  type TimelineItem,
  timelineOf,
  toolNameOf,
  type UIMessagePart,
  type WaitingToolCall,
  waitingRequestOf,
  waitingToolCalls,
} from '@bubble/sdk/client';

export type RunView = RunState;
export type ApprovalView = ApprovalAnswer;
export type ApprovalRequestView = ApprovalRequest;
export type { TimelineItem };

/**
 * What the thread view shows: the sdk's thread fold (`foldThread`), held as one immutable state
 * and replaced on every event, with change notifications for the view. Nothing here folds
 * events itself; every read is the fold's own (`approvalOf`, `waitingRequestOf`, `mayApprove`…).
 * A new state shares every run an event did not touch, so the view re-renders only the message
 * that changed.
 */
export class ThreadModel {
  readonly threadId: string;
  #state: ThreadState = emptyThreadState();
  /** Bumped when the fold's artifacts change, so the artifacts panel knows to reload. */
  artifactsVersion = 0;
  /** Bumped when the fold's participants change. */
  participantsVersion = 0;
  readonly #listeners = new Set<() => void>();
  #notifyScheduled = false;
  readonly #isBot: (principalId: string) => boolean;

  /** `isBot` tells bots from people (the thread view knows the participants' kinds), asked at every read. */
  constructor(threadId: string, options: { isBot?: (principalId: string) => boolean } = {}) {
    this.threadId = threadId;
    this.#isBot = options.isBot ?? (() => true);
  }

  get state(): ThreadState {
    return this.#state;
  }

  get lastSeq(): number {
    return this.#state.lastSeq;
  }

  get items(): readonly TimelineItem[] {
    return timelineOf(this.#state);
  }

  get runs(): readonly RunView[] {
    return runsOf(this.#state);
  }

  run(runId: string): RunView | undefined {
    return runOf(this.#state, runId);
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once the view has been told of everything applied (the fold itself is synchronous). */
  async settled(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  apply(event: EventEnvelope): void {
    const previous = this.#state;
    const next = foldThread(previous, event);
    if (next === previous) return;
    if (next.artifacts !== previous.artifacts) this.artifactsVersion += 1;
    if (next.participants !== previous.participants) this.participantsVersion += 1;
    this.#state = next;
    this.#notify();
  }

  waitingToolCalls(): WaitingToolCall[] {
    return waitingToolCalls(this.#state, this.#isBot);
  }

  approval(toolCallId: string): ApprovalView | undefined {
    return approvalOf(this.#state, toolCallId, this.#isBot);
  }

  suppliedResult(toolCallId: string): SuppliedResult | undefined {
    return suppliedResultOf(this.#state, toolCallId, this.#isBot);
  }

  request(toolCallId: string): ApprovalRequestView | undefined {
    return approvalRequestOf(this.#state, toolCallId, this.#isBot);
  }

  waitingRequest(toolCallId: string): ApprovalRequestView | undefined {
    return waitingRequestOf(this.#state, toolCallId, this.#isBot);
  }

  subagentRequests(runId: string): ApprovalRequestView[] {
    return subagentRequests(this.#state, runId, this.#isBot);
  }

  /** Whether `principalId` gets Approve and Deny for the call now (the fold's one approver rule). */
  mayApprove(toolCallId: string, principalId: string): boolean {
    return mayApprove(this.#state, toolCallId, principalId, this.#isBot);
  }

  /** Stops telling the view (it is gone). */
  dispose(): void {
    this.#listeners.clear();
  }

  #notify(): void {
    if (this.#notifyScheduled) return;
    this.#notifyScheduled = true;
    queueMicrotask(() => {
      this.#notifyScheduled = false;
      for (const listener of this.#listeners) listener();
    });
  }
}

export interface ToolPartView {
  toolCallId: string;
  toolName: string;
  state: string;
  input: unknown;
  output: unknown;
  errorText: string | undefined;
}

/** A tool part of a UI message (static `tool-NAME` or `dynamic-tool`) as the view shows it, or null. */
export function toolPartOf(part: UIMessagePart): ToolPartView | null {
  if (!isToolUIPart(part)) return null;
  return {
    toolCallId: part.toolCallId,
    toolName: toolNameOf(part),
    state: part.state,
    input: part.input,
    output: part.output,
    errorText: part.errorText,
  };
}
