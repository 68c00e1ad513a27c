import type { NarrowedSdkMessage } from '@bubble/engine';
import type { BubbleEventDraft } from '../translate/bubble-draft.js';
import type { InterruptNote, RunOutcome } from '../translate/run-outcome.js';
import { SdkToBubble, type TranslatorSignal } from '../translate/sdk-to-bubble.js';
import { SubagentRegistry, type ChildRunInfo, type Delivery, type OpenRequest, type RegistryStep } from './subagent-registry.js';

export interface ThreadOutputStep {
  /** Events to append, per thread, in order. */
  deliveries: Delivery[];
  /** Subthreads to create for sub-agents; answer each with `attached` or `failedToAttach`. */
  open: OpenRequest[];
  /** What the session acts on or logs: session id, runs opened and finished, retries, skips. */
  signals: TranslatorSignal[];
  /** Sub-agent messages that had nowhere to go. */
  dropped: number;
}

export interface ThreadOutputOptions {
  threadId: string;
  newRunId: () => string;
  now: () => Date;
}

/**
 * Everything one query says, sorted onto threads: the main conversation on
 * the session's thread, each sub-agent on its own subthread. Pure apart from
 * its state; the session does the HTTP calls.
 */
export class ThreadOutput {
  readonly threadId: string;
  readonly #main: SdkToBubble;
  readonly #subagents: SubagentRegistry;

  constructor(options: ThreadOutputOptions) {
    this.threadId = options.threadId;
    this.#main = new SdkToBubble({ scope: null, newRunId: options.newRunId, now: options.now });
    this.#subagents = new SubagentRegistry({ now: options.now });
  }

  get currentRunId(): string | undefined {
    return this.#main.currentRunId;
  }

  get isIdle(): boolean {
    return this.#main.isIdle;
  }

  /** Sub-agents still running (their child runs are open). */
  get activeSubagents(): string[] {
    return this.#subagents.active;
  }

  beginRun(begin: { runId: string; replyTo?: number[]; userMessageUuid?: string }): Delivery {
    return { threadId: this.threadId, events: this.#main.beginRun(begin) };
  }

  /** Closes one main run without a result (it never reached the CLI). */
  finishRun(runId: string, outcome: RunOutcome): BubbleEventDraft[] {
    return this.#main.finishRun(runId, outcome);
  }

  /** The sub-agent a child run belongs to, while it is open. */
  childRun(runId: string): ChildRunInfo | undefined {
    return this.#subagents.childRun(runId);
  }

  noteChildInterrupt(toolCallId: string, note: { by: string; reason?: string }): void {
    this.#subagents.noteInterrupt(toolCallId, note);
  }

  noteSteer(uuid: string): void {
    this.#main.noteSteer(uuid);
  }

  noteInterrupt(runId: string, note: InterruptNote): void {
    this.#main.noteInterrupt(runId, note);
  }

  push(message: NarrowedSdkMessage): ThreadOutputStep {
    const out = this.#main.push(message);
    const step: ThreadOutputStep = { deliveries: [], open: [], signals: [], dropped: 0 };
    this.#deliver(step, this.threadId, out.events);
    for (const signal of out.signals) {
      switch (signal.kind) {
        case 'subagent_started':
          step.open.push(
            this.#subagents.open({ parentThreadId: this.threadId, parentRunId: signal.runId, toolCallId: signal.toolCallId, toolName: signal.toolName, input: signal.input }),
          );
          break;
        case 'routed':
          this.#merge(step, this.#subagents.route(signal.parentToolUseId, signal.message));
          break;
        case 'subagent_tool_result':
          this.#merge(step, this.#subagents.toolResult(signal));
          break;
        case 'task':
          if (signal.subtype === 'task_notification' && signal.toolUseId !== undefined) {
            this.#merge(step, this.#subagents.taskNotification(signal.toolUseId, signal.status));
          } else if (signal.subtype === 'task_started' && signal.toolUseId !== undefined) {
            this.#subagents.taskStarted(signal.toolUseId, signal.taskId, signal.background);
          }
          break;
        default:
          break;
      }
      step.signals.push(signal);
    }
    return step;
  }

  /** The subthread for `toolCallId` exists now. */
  attached(toolCallId: string, childThreadId: string): ThreadOutputStep {
    return this.#fromRegistry(this.#subagents.attach(toolCallId, childThreadId));
  }

  /** Creating the subthread failed: the parent still shows the tool call. */
  failedToAttach(toolCallId: string): ThreadOutputStep {
    return this.#fromRegistry(this.#subagents.detach(toolCallId));
  }

  /** The query ended without results for what is open (the CLI died, or it was closed): close every run. */
  closeAll(outcome: RunOutcome): ThreadOutputStep {
    const step = this.#fromRegistry(this.#subagents.closeAll(outcome));
    const events: BubbleEventDraft[] = [];
    for (const runId of this.#main.openRunIds) events.push(...this.#main.finishRun(runId, outcome));
    this.#deliver(step, this.threadId, events);
    return step;
  }

  #fromRegistry(registry: RegistryStep): ThreadOutputStep {
    const step: ThreadOutputStep = { deliveries: [], open: [], signals: [], dropped: 0 };
    this.#merge(step, registry);
    return step;
  }

  #merge(step: ThreadOutputStep, registry: RegistryStep): void {
    for (const delivery of registry.deliveries) this.#deliver(step, delivery.threadId, delivery.events);
    step.open.push(...registry.open);
    step.dropped += registry.dropped;
  }

  /** Appends to the last delivery when it is for the same thread, so one message's events go out together. */
  #deliver(step: ThreadOutputStep, threadId: string, events: BubbleEventDraft[]): void {
    if (events.length === 0) return;
    const last = step.deliveries.at(-1);
    if (last && last.threadId === threadId) last.events.push(...events);
    else step.deliveries.push({ threadId, events: [...events] });
  }
}
