import { createHash } from 'node:crypto';
import type { NarrowedSdkMessage } from '@bubble/engine';
import type { RunStatus } from '@bubble/protocol';
import { ScubaError } from '../errors.js';
import type { BubbleEventDraft } from '../translate/bubble-draft.js';
import type { RunOutcome } from '../translate/run-outcome.js';
import { SdkToBubble, type TranslatorSignal } from '../translate/sdk-to-bubble.js';

/**
 * The idempotency key of a sub-agent's subthread: a hash of the parent
 * thread, run and tool-call ids, so a retried create returns the same child.
 */
export function subagentKey(ids: { threadId: string; runId: string; toolCallId: string }): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([ids.threadId, ids.runId, ids.toolCallId]))
    .digest('base64url');
  return `subagent-${digest.slice(0, 43)}`;
}

/** Events to append, and where. */
export interface Delivery {
  threadId: string;
  events: BubbleEventDraft[];
}

/** A subthread the owner must create (POST /v1/threads with `parentThreadId` and `key`), then `attach`. */
export interface OpenRequest {
  toolCallId: string;
  parentThreadId: string;
  key: string;
  /** A title for the subthread: the Agent's `description`. */
  title: string | undefined;
}

export interface RegistryStep {
  deliveries: Delivery[];
  /** Nested sub-agents (an Agent call inside a sub-agent) to open. */
  open: OpenRequest[];
  /** Sub-agent messages that could not be shown (their subthread failed to open), for the log. */
  dropped: number;
  /** Subthreads whose sub-agent ended in this step (its run there is closed). */
  ended?: string[];
}

type State = 'opening' | 'open' | 'detached' | 'closed';

interface Entry {
  toolCallId: string;
  toolName: string;
  input: unknown;
  parentThreadId: string;
  parentRunId: string;
  key: string;
  childRunId: string;
  state: State;
  childThreadId?: string;
  translator: SdkToBubble;
  /** Messages that arrived before the subthread existed. */
  buffer: NarrowedSdkMessage[];
  /** A close that arrived before the subthread existed. */
  pendingClose?: RunOutcome;
  /** The CLI's task id (system/task_started), to stop a background agent. */
  taskId?: string;
  background?: boolean;
  /** Who asked to stop it, for its run_finished. */
  interrupt?: { by: string; reason?: string };
}

/** What an interrupt of a sub-agent's run needs to know. */
export interface ChildRunInfo {
  toolCallId: string;
  taskId: string | undefined;
  background: boolean;
}

export interface SubagentRegistryOptions {
  now: () => Date;
  /** Messages kept per sub-agent while its subthread is being created. Default 500. */
  maxBuffered?: number;
  /** The calls the bot refused, shared with every sub-agent's translator. */
  denials?: ReadonlyMap<string, string>;
}

const EMPTY = (): RegistryStep => ({ deliveries: [], open: [], dropped: 0 });

/**
 * Sub-agents become subthreads (seed: "Sub-agents become subthreads"). An
 * Agent/Task tool use opens an entry; once the owner has created the
 * subthread, the parent gets `tool-input-available` carrying the child's id
 * and the child gets `run_started`, then every message of that sub-agent,
 * translated by a translator scoped to its tool_use id. The child's run ends
 * at the Agent tool result (foreground) or the task notification
 * (background), whichever says it is done first. State only: the owner does
 * the HTTP calls and the appends.
 */
export class SubagentRegistry {
  readonly #options: SubagentRegistryOptions;
  readonly #entries = new Map<string, Entry>();

  constructor(options: SubagentRegistryOptions) {
    this.#options = options;
  }

  /** Sub-agents whose child run is still open (or not yet created). */
  get active(): string[] {
    return [...this.#entries.values()]
      .filter((e) => e.state === 'opening' || e.state === 'open')
      .map((e) => e.toolCallId);
  }

  has(toolCallId: string): boolean {
    return this.#entries.has(toolCallId);
  }

  childThreadOf(toolCallId: string): string | undefined {
    return this.#entries.get(toolCallId)?.childThreadId;
  }

  /** The sub-agent's subthread and its run there, once the subthread exists. */
  childOf(toolCallId: string): { threadId: string; runId: string } | undefined {
    const entry = this.#entries.get(toolCallId);
    return entry?.childThreadId === undefined ? undefined : { threadId: entry.childThreadId, runId: entry.childRunId };
  }

  /** Registers an Agent tool use seen on `parentThreadId` in run `parentRunId`. */
  open(params: {
    parentThreadId: string;
    parentRunId: string;
    toolCallId: string;
    toolName: string;
    input: unknown;
  }): OpenRequest {
    if (this.#entries.has(params.toolCallId)) {
      throw new ScubaError('subagent_duplicate', `sub-agent ${params.toolCallId} is already open`);
    }
    const key = subagentKey({
      threadId: params.parentThreadId,
      runId: params.parentRunId,
      toolCallId: params.toolCallId,
    });
    const entry: Entry = {
      ...params,
      key,
      childRunId: `sub-${params.toolCallId}`,
      state: 'opening',
      translator: new SdkToBubble({
        scope: params.toolCallId,
        newRunId: () => `sub-${params.toolCallId}-more`,
        now: this.#options.now,
        denials: this.#options.denials,
      }),
      buffer: [],
    };
    this.#entries.set(params.toolCallId, entry);
    const description =
      typeof params.input === 'object' && params.input !== null
        ? (params.input as { description?: unknown }).description
        : undefined;
    return {
      toolCallId: params.toolCallId,
      parentThreadId: params.parentThreadId,
      key,
      title: typeof description === 'string' ? description : undefined,
    };
  }

  /** The subthread exists: announce it on the parent, open the child run, and deliver what was waiting. */
  attach(toolCallId: string, childThreadId: string): RegistryStep {
    const entry = this.#entries.get(toolCallId);
    if (entry?.state !== 'opening') return EMPTY();
    entry.state = 'open';
    entry.childThreadId = childThreadId;
    const step = EMPTY();
    step.deliveries.push({ threadId: entry.parentThreadId, events: [this.#parentChunk(entry)] });
    const child: BubbleEventDraft[] = entry.translator.beginRun({ runId: entry.childRunId });
    step.deliveries.push({ threadId: childThreadId, events: child });
    const buffered = entry.buffer.splice(0);
    for (const message of buffered) this.#translate(entry, message, step);
    if (entry.pendingClose) this.#close(entry, entry.pendingClose, step);
    return step;
  }

  /** The subthread could not be created: the parent still gets its tool chunk; the sub-agent's messages are dropped. */
  detach(toolCallId: string): RegistryStep {
    const entry = this.#entries.get(toolCallId);
    if (entry?.state !== 'opening') return EMPTY();
    entry.state = 'detached';
    const step = EMPTY();
    step.dropped = entry.buffer.length;
    entry.buffer = [];
    step.deliveries.push({ threadId: entry.parentThreadId, events: [this.#parentChunk(entry)] });
    return step;
  }

  /** A message whose parent_tool_use_id is `toolCallId`. */
  route(toolCallId: string, message: NarrowedSdkMessage): RegistryStep {
    const entry = this.#entries.get(toolCallId);
    const step = EMPTY();
    if (!entry || entry.state === 'detached' || entry.state === 'closed') {
      step.dropped = 1;
      return step;
    }
    if (entry.state === 'opening') {
      if (entry.buffer.length < (this.#options.maxBuffered ?? 500)) entry.buffer.push(message);
      else step.dropped = 1;
      return step;
    }
    this.#translate(entry, message, step);
    return step;
  }

  /** The main translator's `subagent_tool_result`: a foreground agent is done; a background one was only launched. */
  toolResult(signal: Extract<TranslatorSignal, { kind: 'subagent_tool_result' }>): RegistryStep {
    const entry = this.#entries.get(signal.toolCallId);
    if (!entry || signal.background) return EMPTY();
    if (signal.isError && entry.interrupt)
      return this.#requestClose(entry, this.#withInterrupt(entry, { status: 'interrupted' }));
    return this.#requestClose(
      entry,
      signal.isError ? errorOutcome('the sub-agent failed') : { status: 'completed', ...agentUsage(signal.result) },
    );
  }

  /** A `task_notification`: the sub-agent (foreground or background) has finished. */
  taskNotification(toolUseId: string, status: string | undefined): RegistryStep {
    const entry = this.#entries.get(toolUseId);
    if (!entry) return EMPTY();
    const stopped = status === 'stopped' || status === 'killed' || entry.interrupt !== undefined;
    const mapped: RunStatus =
      status === 'completed' && !entry.interrupt ? 'completed' : stopped ? 'interrupted' : 'error';
    if (mapped === 'error')
      return this.#requestClose(entry, errorOutcome(`the sub-agent ended with status ${status ?? 'unknown'}`));
    return this.#requestClose(entry, this.#withInterrupt(entry, { status: mapped }));
  }

  /** system/task_started: remembers the task id (and whether it runs in the background). */
  taskStarted(toolUseId: string, taskId: string, background: boolean | undefined): void {
    const entry = this.#entries.get(toolUseId);
    if (!entry) return;
    entry.taskId = taskId;
    if (background !== undefined) entry.background = background;
  }

  /** The sub-agent whose child run this is, while that run is open. */
  childRun(runId: string): ChildRunInfo | undefined {
    for (const entry of this.#entries.values()) {
      if (entry.childRunId === runId && (entry.state === 'open' || entry.state === 'opening')) {
        return { toolCallId: entry.toolCallId, taskId: entry.taskId, background: entry.background === true };
      }
    }
    return undefined;
  }

  /** Remembers who asked to stop a sub-agent, for its run_finished. */
  noteInterrupt(toolCallId: string, note: { by: string; reason?: string }): void {
    const entry = this.#entries.get(toolCallId);
    if (entry) entry.interrupt = note;
  }

  #withInterrupt(entry: Entry, outcome: RunOutcome): RunOutcome {
    if (!entry.interrupt) return outcome;
    return {
      ...outcome,
      status: 'interrupted',
      interruptedBy: entry.interrupt.by,
      ...(entry.interrupt.reason !== undefined ? { interruptReason: entry.interrupt.reason } : {}),
    };
  }

  /** Ends every open child run (the query ended). */
  closeAll(outcome: RunOutcome): RegistryStep {
    const step = EMPTY();
    for (const entry of this.#entries.values()) {
      if (entry.state === 'open') this.#close(entry, outcome, step);
      else if (entry.state === 'opening') entry.pendingClose = outcome;
    }
    return step;
  }

  #requestClose(entry: Entry, outcome: RunOutcome): RegistryStep {
    const step = EMPTY();
    if (entry.state === 'opening') entry.pendingClose ??= outcome;
    else if (entry.state === 'open') this.#close(entry, outcome, step);
    return step;
  }

  #close(entry: Entry, outcome: RunOutcome, step: RegistryStep): void {
    entry.state = 'closed';
    const events: BubbleEventDraft[] = [];
    for (const runId of entry.translator.openRunIds) events.push(...entry.translator.finishRun(runId, outcome));
    step.deliveries.push({ threadId: entry.childThreadId!, events });
    (step.ended ??= []).push(entry.childThreadId!);
  }

  #translate(entry: Entry, message: NarrowedSdkMessage, step: RegistryStep): void {
    const out = entry.translator.push(message);
    if (out.events.length > 0) step.deliveries.push({ threadId: entry.childThreadId!, events: out.events });
    for (const signal of out.signals) {
      if (signal.kind === 'subagent_started') {
        step.open.push(
          this.open({
            parentThreadId: entry.childThreadId!,
            parentRunId: signal.runId,
            toolCallId: signal.toolCallId,
            toolName: signal.toolName,
            input: signal.input,
          }),
        );
      } else if (signal.kind === 'subagent_tool_result') {
        const nested = this.toolResult(signal);
        step.deliveries.push(...nested.deliveries);
      }
    }
  }

  #parentChunk(entry: Entry): BubbleEventDraft {
    const chunk: Record<string, unknown> = {
      type: 'tool-input-available',
      toolCallId: entry.toolCallId,
      toolName: entry.toolName,
      input: entry.input ?? {},
    };
    if (entry.childThreadId !== undefined) chunk.providerMetadata = { bubble: { childThreadId: entry.childThreadId } };
    return {
      type: 'message_part',
      data: {
        runId: entry.parentRunId,
        chunk: chunk as Extract<BubbleEventDraft, { type: 'message_part' }>['data']['chunk'],
      },
      clientEventId: `${entry.parentRunId}:agent:${entry.toolCallId}`,
    };
  }
}

function errorOutcome(message: string): RunOutcome {
  return { status: 'error', error: { code: 'subagent_failed', message } };
}

/** Usage from an AgentOutput (`tool_use_result` of a foreground Agent call). */
function agentUsage(result: unknown): Pick<RunOutcome, 'usage'> {
  if (typeof result !== 'object' || result === null) return {};
  const r = result as { totalTokens?: unknown; totalToolUseCount?: unknown; totalDurationMs?: unknown };
  const usage: Record<string, number> = {};
  if (typeof r.totalTokens === 'number') usage.totalTokens = r.totalTokens;
  if (typeof r.totalToolUseCount === 'number') usage.toolUses = r.totalToolUseCount;
  if (typeof r.totalDurationMs === 'number') usage.durationMs = r.totalDurationMs;
  return Object.keys(usage).length > 0 ? { usage } : {};
}
