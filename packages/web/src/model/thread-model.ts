import type { EventEnvelope, Grant } from '@bubble/protocol';
import {
  type ApprovalAnswer,
  type ApprovalRequest,
  approvalOf,
  approvalRequestOf,
  foldPresence,
  isToolUIPart,
  type Participant,
  type PresenceChange,
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
import { EventWindow, MAX_PAGE, type ReadEvents, readBackward } from './event-window';

export type RunView = RunState;
export type ApprovalView = ApprovalAnswer;
export type ApprovalRequestView = ApprovalRequest;
export type { TimelineItem };

/** How many events the view reads first (the newest), and then per page as the reader scrolls up. */
export const FIRST_PAGE = 300;
export const OLDER_PAGE = 300;
/** How far a page grows backward so that no run is cut in two (a run longer than that shows its tail). */
export const MAX_EXPANSION = 3_000;
/** Unread further back than this is not read at open: the view opens at the newest instead. */
export const MAX_UNREAD_READ = 2_000;

/**
 * What the thread view shows: the sdk's thread fold (`foldThread`), held as one immutable state
 * and replaced on every event, with change notifications for the view. Nothing here folds
 * events itself; every read is the fold's own (`approvalOf`, `waitingRequestOf`, `mayApprove`…).
 * A new state shares every run an event did not touch, so the view re-renders only the message
 * that changed.
 *
 * A long thread is read newest first (`open`), older pages as the reader scrolls up
 * (`loadOlder`); see `EventWindow` for how a page is put in front of what is held.
 */
export class ThreadModel {
  readonly threadId: string;
  readonly #window = new EventWindow();
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

  get #state(): ThreadState {
    return this.#window.state;
  }

  get state(): ThreadState {
    return this.#state;
  }

  get lastSeq(): number {
    return this.#state.lastSeq;
  }

  /** The oldest seq read so far. */
  get firstSeq(): number {
    return this.#window.firstSeq;
  }

  /** Whether there are older events than those read. */
  get hasOlder(): boolean {
    return this.#window.hasOlder;
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

  /**
   * Reads the newest events (at least `FIRST_PAGE`, back to `readTo` when that is not further
   * than `MAX_UNREAD_READ`, never cutting a run) and folds them at once: one render, not one
   * per event. Live events then come from a subscription after `lastSeq`.
   */
  async open(read: ReadEvents, options: { headSeq: number; readTo?: number }): Promise<void> {
    const { headSeq } = options;
    const readTo = options.readTo ?? headSeq;
    const want = headSeq - readTo <= MAX_UNREAD_READ ? Math.max(FIRST_PAGE, headSeq - readTo + 1) : FIRST_PAGE;
    const events = await readBackward(read, headSeq + 1, want, MAX_EXPANSION);
    // Live events may have landed meanwhile (a subscription already running): keep them.
    const held = this.#window.events.filter((event) => event.seq > (events[events.length - 1]?.seq ?? 0));
    this.#window.reset([...events, ...held]);
    this.#notify();
  }

  /** Reads one older page and puts it in front; false when there is nothing older. */
  async loadOlder(read: ReadEvents, page = OLDER_PAGE): Promise<boolean> {
    if (!this.#window.hasOlder) return false;
    const older = await readBackward(read, this.#window.firstSeq, Math.min(page, MAX_PAGE), MAX_EXPANSION);
    if (older.length === 0) return false;
    const before = this.#state;
    this.#window.prepend(older);
    if (this.#state.artifacts !== before.artifacts) this.artifactsVersion += 1;
    this.#notify();
    return true;
  }

  /**
   * The live grants as the server lists them: the participants the window's events do not
   * reach back to, and each one's `online` where the server says it (protocol.md).
   */
  setGrants(grants: readonly Grant[]): void {
    const participants: Record<string, Participant> = {};
    for (const grant of grants)
      participants[grant.principalId] = {
        principalId: grant.principalId,
        role: grant.role,
        by: grant.grantedBy,
        joinedSeq: grant.joinedSeq,
      };
    const before = this.#state;
    this.#window.seedParticipants(participants);
    let next = this.#state;
    for (const grant of grants) {
      const online = onlineOf(grant);
      if (online !== undefined) next = foldPresence(next, { principalId: grant.principalId, online });
    }
    if (next !== this.#state) this.#window.replaceState(next);
    if (this.#state !== before) this.#notify();
  }

  /** A `presence` frame of the thread's subscription (protocol.md): someone came online or went offline. */
  applyPresence(change: PresenceChange): void {
    const next = foldPresence(this.#state, change);
    if (next === this.#state) return;
    this.#window.replaceState(next);
    this.#notify();
  }

  /** Whether the server has said anything about presence on this thread (an older server says nothing). */
  get knowsPresence(): boolean {
    return Object.keys(this.#state.presence).length > 0;
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
    const next = this.#window.append(event);
    if (next === previous) return;
    if (next.artifacts !== previous.artifacts) this.artifactsVersion += 1;
    if (next.participants !== previous.participants) this.participantsVersion += 1;
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

/** A grant's `online` (protocol.md, participants listing), where the server and the client's schema carry it. */
export function onlineOf(grant: Grant): boolean | undefined {
  const online = (grant as Grant & { online?: unknown }).online;
  return typeof online === 'boolean' ? online : undefined;
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
