import type { ContentBlockLike, NarrowedSdkMessage } from '@bubble/engine';
import type { UiChunk } from '@bubble/protocol';
import type { BubbleEventDraft } from '../translate/bubble-draft.js';
import type { InterruptNote, RunOutcome } from '../translate/run-outcome.js';
import { SdkToBubble, type TranslatorSignal } from '../translate/sdk-to-bubble.js';
import {
  SubagentRegistry,
  type ChildRunInfo,
  type Delivery,
  type OpenRequest,
  type RegistryStep,
} from './subagent-registry.js';

/** How many refused and located tool calls are remembered (oldest forgotten first). */
const MAX_REMEMBERED = 1000;

export interface ThreadOutputStep {
  /** Events to append, per thread, in order. */
  deliveries: Delivery[];
  /** Subthreads to create for sub-agents; answer each with `attached` or `failedToAttach`. */
  open: OpenRequest[];
  /** What the session acts on or logs: session id, runs opened and finished, retries, skips. */
  signals: TranslatorSignal[];
  /** Sub-agent messages that had nowhere to go. */
  dropped: number;
  /** Subthreads whose sub-agent ended here. */
  ended?: string[];
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
  /** Refused calls → reason, read by every translator of this output. */
  readonly #denials = new Map<string, string>();
  /** Tool calls seen → the sub-agent (its Agent tool_use id) that made it, or null for the main conversation. */
  readonly #callScopes = new Map<string, string | null>();

  constructor(options: ThreadOutputOptions) {
    this.threadId = options.threadId;
    this.#main = new SdkToBubble({ scope: null, newRunId: options.newRunId, now: options.now, denials: this.#denials });
    this.#subagents = new SubagentRegistry({ now: options.now, denials: this.#denials });
  }

  /** A call the bot refused: its end is shown as a denial with this reason, wherever the call is. */
  noteDenied(toolCallId: string, reason: string): void {
    this.#denials.set(toolCallId, reason);
    if (this.#denials.size > MAX_REMEMBERED) this.#denials.delete(this.#denials.keys().next().value!);
  }

  /**
   * Where a tool call seen so far is shown: on this thread (`subagent` undefined), or
   * in a sub-agent's subthread (`childThreadId` once it exists). Undefined when the
   * call's tool_use has not come through yet.
   */
  locateToolCall(toolCallId: string): { subagent?: string; childThreadId?: string } | undefined {
    const scope = this.#callScopes.get(toolCallId);
    if (scope === undefined) return undefined;
    if (scope === null) return {};
    const childThreadId = this.#subagents.childThreadOf(scope);
    return childThreadId === undefined ? { subagent: scope } : { subagent: scope, childThreadId };
  }

  /**
   * The thread and run a tool call belongs to: a sub-agent's subthread and its
   * run there for a call the sub-agent made (once the subthread exists), else
   * this thread and its current run.
   */
  callContext(toolCallId: string): { threadId: string; runId: string | undefined } {
    const scope = this.#callScopes.get(toolCallId);
    const child = typeof scope === 'string' ? this.#subagents.childOf(scope) : undefined;
    return child ?? { threadId: this.threadId, runId: this.#main.currentRunId };
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

  /** A `data-status` chunk on an open main run (e.g. the turn waits for a CLI slot). */
  status(runId: string, data: Record<string, unknown>): BubbleEventDraft {
    return this.#main.chunk(runId, { type: 'data-status', data } as UiChunk);
  }

  /** A call of this thread's turn that will not get a result from the CLI (its CLI was closed). */
  callSetAside(runId: string, toolCallId: string, errorText: string): BubbleEventDraft {
    return this.#main.chunk(runId, { type: 'tool-output-error', toolCallId, errorText });
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

  /** A message pushed into the running turn (see `SdkToBubble.noteAside`). */
  noteAside(uuid: string, replyTo: readonly number[]): void {
    this.#main.noteAside(uuid, replyTo);
  }

  /** A new CLI process: its cost count starts again. */
  newQuery(): void {
    this.#main.newQuery();
  }

  /** The main conversation's tool calls without a result yet. */
  get openCalls(): ReadonlySet<string> {
    return this.#main.openCalls;
  }

  noteInterrupt(runId: string, note: InterruptNote): void {
    this.#main.noteInterrupt(runId, note);
  }

  push(message: NarrowedSdkMessage): ThreadOutputStep {
    if (message.kind === 'assistant') this.#noteCalls(message, message.message.parent_tool_use_id ?? null);
    const out = this.#main.push(message);
    const step: ThreadOutputStep = { deliveries: [], open: [], signals: [], dropped: 0 };
    this.#deliver(step, this.threadId, out.events);
    for (const signal of out.signals) {
      switch (signal.kind) {
        case 'subagent_started':
          step.open.push(
            this.#subagents.open({
              parentThreadId: this.threadId,
              parentRunId: signal.runId,
              toolCallId: signal.toolCallId,
              toolName: signal.toolName,
              input: signal.input,
            }),
          );
          break;
        case 'routed':
          if (signal.message.kind === 'assistant') this.#noteCalls(signal.message, signal.parentToolUseId);
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
    this.#deliver(step, this.threadId, this.#main.finishAll(outcome));
    return step;
  }

  /** Remembers which scope each tool_use of an assistant message belongs to (null: this thread). */
  #noteCalls(message: Extract<NarrowedSdkMessage, { kind: 'assistant' }>, scope: string | null): void {
    const content = message.message.message.content;
    if (!Array.isArray(content)) return;
    for (const block of content as ContentBlockLike[]) {
      if (block.type !== 'tool_use' || typeof block.id !== 'string' || this.#callScopes.has(block.id)) continue;
      this.#callScopes.set(block.id, scope);
      if (this.#callScopes.size > MAX_REMEMBERED) this.#callScopes.delete(this.#callScopes.keys().next().value!);
    }
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
    if (registry.ended) (step.ended ??= []).push(...registry.ended);
  }

  /** Appends to the last delivery when it is for the same thread, so one message's events go out together. */
  #deliver(step: ThreadOutputStep, threadId: string, events: BubbleEventDraft[]): void {
    if (events.length === 0) return;
    const last = step.deliveries.at(-1);
    if (last && last.threadId === threadId) last.events.push(...events);
    else step.deliveries.push({ threadId, events: [...events] });
  }
}
