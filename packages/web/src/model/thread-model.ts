import type { EventEnvelope } from '@bubble/protocol';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';

/**
 * One thread's events folded into what the thread view shows. Events must be
 * applied in seq order (the sdk's live subscription guarantees it); a seq at or
 * below the last applied one is ignored, so a replay after a reconnect can
 * never duplicate anything.
 *
 * A run's chunks are assembled into one UI message by the `ai` package's own
 * `readUIMessageStream`: each run gets a ReadableStream that its chunks are
 * written to as they land, and every snapshot the reader yields replaces the
 * run's message.
 */
export type RunStatus = 'streaming' | 'completed' | 'interrupted' | 'error';

export interface RunView {
  readonly runId: string;
  readonly principalId: string;
  readonly firstSeq: number;
  readonly createdAt: string;
  status: RunStatus;
  error?: { code: string; message: string };
  /** Who asked to stop it, once someone did. */
  interruptRequestedBy?: string;
  message: UIMessage;
  /** Tool calls that run in a subthread: toolCallId → child thread id. */
  readonly childThreads: Record<string, string>;
}

export interface ApprovalView {
  readonly toolCallId: string;
  readonly decision: 'allow' | 'deny';
  readonly reason?: string;
  readonly by: string;
  readonly seq: number;
}

/**
 * A parked tool call a bot announced with a `tool-approval-request` chunk
 * (protocol.md, "Tool approvals"): only these get Approve and Deny, and only
 * for the principals it lists.
 */
export interface ApprovalRequestView {
  readonly toolCallId: string;
  /** The bot that asked (the author of the run that carries the request). */
  readonly by: string;
  /** The bot's run on this thread that carries the request. */
  readonly runId: string;
  readonly seq: number;
  readonly approvers: readonly string[];
  /** A sub-agent's call: the subthread it is shown on, and what it wants to run. */
  readonly subthreadId?: string;
  readonly toolName?: string;
  readonly input?: unknown;
}

export type TimelineItem =
  | { readonly kind: 'run'; readonly runId: string; readonly seq: number }
  | { readonly kind: 'notice'; readonly seq: number; readonly text: string; readonly principalId: string };

interface RunState {
  view: RunView;
  controller: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  closed: boolean;
  done: Promise<void>;
}

export class ThreadModel {
  readonly threadId: string;
  lastSeq = 0;
  readonly items: TimelineItem[] = [];
  /** Every answer to a call, in seq order; `approval()` picks the one that counts. */
  readonly #answers = new Map<string, ApprovalView[]>();
  /** Requests announced on this thread, by toolCallId: the first of each author. */
  readonly #requests = new Map<string, ApprovalRequestView[]>();
  /** Tool calls answered by a participant with `tool_call_result`, every answer in seq order. */
  readonly #results = new Map<string, Array<{ by: string; isError: boolean }>>();
  /** Bumped on every `artifact_updated`, so the artifacts panel knows to reload. */
  artifactsVersion = 0;
  /** Bumped on every participant change. */
  participantsVersion = 0;
  readonly #runs = new Map<string, RunState>();
  readonly #listeners = new Set<() => void>();
  #notifyScheduled = false;

  readonly #isBot: (principalId: string) => boolean;

  /** `isBot` tells bots from people (the thread view knows the participants' kinds). */
  constructor(threadId: string, options: { isBot?: (principalId: string) => boolean } = {}) {
    this.threadId = threadId;
    this.#isBot = options.isBot ?? (() => true);
  }

  run(runId: string): RunView | undefined {
    return this.#runs.get(runId)?.view;
  }

  get runs(): RunView[] {
    return [...this.#runs.values()].map((r) => r.view);
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once every closed run's message is fully assembled (for tests and final renders). */
  async settled(): Promise<void> {
    await Promise.all([...this.#runs.values()].filter((r) => r.closed).map((r) => r.done));
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  apply(event: EventEnvelope): void {
    if (event.seq <= this.lastSeq) return;
    this.lastSeq = event.seq;
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'run_started': {
        const runId = String(data.runId);
        this.#openRun(runId, event);
        break;
      }
      case 'message_part': {
        const runId = String(data.runId);
        const run = this.#runs.get(runId) ?? this.#openRun(runId, event);
        const chunk = data.chunk as UIMessageChunk & { providerMetadata?: { bubble?: { childThreadId?: unknown } } };
        if (chunk.type === 'tool-input-available') {
          const child = chunk.providerMetadata?.bubble?.childThreadId;
          if (typeof child === 'string') run.view.childThreads[chunk.toolCallId] = child;
        }
        if (chunk.type === 'tool-approval-request') {
          // Kept beside the UI message: a sub-agent's call has no tool part in this run to attach to.
          this.#noteApprovalRequest(runId, event.seq, chunk as unknown as Record<string, unknown>, event.principalId);
          break;
        }
        if (!run.closed) run.controller?.enqueue(chunk);
        break;
      }
      case 'run_finished': {
        const runId = String(data.runId);
        const run = this.#runs.get(runId) ?? this.#openRun(runId, event);
        const status = data.status;
        run.view.status =
          status === 'completed' || status === 'interrupted' || status === 'error' ? status : 'completed';
        const error = data.error as { code?: unknown; message?: unknown } | undefined;
        if (error) run.view.error = { code: String(error.code ?? 'error'), message: String(error.message ?? '') };
        this.#closeRun(run);
        break;
      }
      case 'run_interrupt_requested': {
        const run = this.#runs.get(String(data.runId));
        if (run && run.view.interruptRequestedBy === undefined) run.view.interruptRequestedBy = event.principalId;
        break;
      }
      case 'tool_call_approval': {
        const toolCallId = String(data.toolCallId);
        const decision = data.decision === 'allow' ? 'allow' : 'deny';
        const reason = typeof data.reason === 'string' && data.reason !== '' ? data.reason : undefined;
        push(this.#answers, toolCallId, {
          toolCallId,
          decision,
          by: event.principalId,
          seq: event.seq,
          ...(reason ? { reason } : {}),
        });
        break;
      }
      case 'tool_call_result':
        push(this.#results, String(data.toolCallId), { by: event.principalId, isError: data.isError === true });
        break;
      case 'participant_added':
        this.participantsVersion += 1;
        this.items.push({
          kind: 'notice',
          seq: event.seq,
          principalId: String(data.principalId),
          text: `${String(data.principalId)} joined as ${String(data.role)}`,
        });
        break;
      case 'participant_removed':
        this.participantsVersion += 1;
        this.items.push({
          kind: 'notice',
          seq: event.seq,
          principalId: String(data.principalId),
          text: `${String(data.principalId)} left`,
        });
        break;
      case 'artifact_updated':
        this.artifactsVersion += 1;
        this.items.push({
          kind: 'notice',
          seq: event.seq,
          principalId: String(data.by),
          text: `${String(data.by)} wrote ${String(data.name)} (version ${String(data.version)})`,
        });
        break;
      default:
        // Extension types (`acme.poll_created`) are not shown.
        break;
    }
    this.#notify();
  }

  /**
   * Announced calls still waiting: no answer, no supplied result, no output yet,
   * and the run that asked is still open (a bot that stopped asks no more).
   */
  waitingToolCalls(): Array<{ runId: string; toolCallId: string; toolName: string; approvers: readonly string[] }> {
    const waiting: Array<{ runId: string; toolCallId: string; toolName: string; approvers: readonly string[] }> = [];
    for (const toolCallId of this.#requests.keys()) {
      const request = this.waitingRequest(toolCallId);
      if (request === undefined) continue;
      waiting.push({
        runId: request.runId,
        toolCallId,
        toolName: request.toolName ?? this.#toolPart(request)?.toolName ?? 'tool',
        approvers: request.approvers,
      });
    }
    return waiting;
  }

  #toolPart(request: ApprovalRequestView): ToolPartView | undefined {
    return this.#runs
      .get(request.runId)
      ?.view.message.parts.map(toolPartOf)
      .find((t): t is ToolPartView => t !== null && t.toolCallId === request.toolCallId);
  }

  /**
   * The answer that counts for a call: the first from one of the approvers its
   * bot named, or the bot's own (an automatic denial). Anyone else's answer is
   * ignored by the bot, so it is not shown as the outcome either.
   */
  approval(toolCallId: string): ApprovalView | undefined {
    return this.#answers.get(toolCallId)?.find((answer) => this.#counts(toolCallId, answer.by));
  }

  /** A result supplied in the tool's place that counts (by the same rule as answers). */
  suppliedResult(toolCallId: string): { by: string; isError: boolean } | undefined {
    return this.#results.get(toolCallId)?.find((result) => this.#counts(toolCallId, result.by));
  }

  /**
   * The request that counts for a call: only a bot asks for approvals, and a
   * call that two bots announced (one impersonating the other's call) counts
   * as none, so nobody is offered buttons for it.
   */
  request(toolCallId: string): ApprovalRequestView | undefined {
    const fromBots = (this.#requests.get(toolCallId) ?? []).filter((r) => this.#isBot(r.by));
    return fromBots.length === 1 ? fromBots[0] : undefined;
  }

  #counts(toolCallId: string, by: string): boolean {
    const request = this.request(toolCallId);
    return request === undefined || by === request.by || request.approvers.includes(by);
  }

  /** The request for a call while it still waits (see `waitingToolCalls`). */
  waitingRequest(toolCallId: string): ApprovalRequestView | undefined {
    const request = this.request(toolCallId);
    if (
      request === undefined ||
      this.approval(toolCallId) !== undefined ||
      this.suppliedResult(toolCallId) !== undefined
    )
      return undefined;
    if (this.#runs.get(request.runId)?.view.status !== 'streaming') return undefined;
    return this.#toolPart(request)?.state.startsWith('output-') ? undefined : request;
  }

  /** Requests for sub-agents' calls carried by a run (their calls are shown on subthreads). */
  subagentRequests(runId: string): ApprovalRequestView[] {
    return [...this.#requests.keys()]
      .map((id) => this.request(id))
      .filter((r): r is ApprovalRequestView => r !== undefined && r.runId === runId && r.toolName !== undefined);
  }

  /** Keeps each author's first request for a call; which one counts is decided when read (see `request`). */
  #noteApprovalRequest(runId: string, seq: number, chunk: Record<string, unknown>, by: string): void {
    const toolCallId = chunk.toolCallId;
    if (typeof toolCallId !== 'string') return;
    const earlier = this.#requests.get(toolCallId) ?? [];
    if (earlier.some((r) => r.by === by)) return;
    const bubble = ((chunk.providerMetadata as Record<string, unknown> | undefined)?.bubble ?? {}) as Record<
      string,
      unknown
    >;
    const approvers = Array.isArray(bubble.approvers)
      ? bubble.approvers.filter((a): a is string => typeof a === 'string')
      : [];
    push(this.#requests, toolCallId, {
      toolCallId,
      by,
      runId,
      seq,
      approvers,
      ...(typeof bubble.threadId === 'string' ? { subthreadId: bubble.threadId } : {}),
      ...(typeof bubble.toolName === 'string' ? { toolName: bubble.toolName, input: bubble.input } : {}),
    });
  }

  /** Ends every run's reader (the view is gone). */
  dispose(): void {
    for (const run of this.#runs.values()) this.#closeRun(run);
    this.#listeners.clear();
  }

  #openRun(runId: string, event: EventEnvelope): RunState {
    const existing = this.#runs.get(runId);
    if (existing) return existing;
    let controller: ReadableStreamDefaultController<UIMessageChunk> | undefined;
    const stream = new ReadableStream<UIMessageChunk>({
      start(c) {
        controller = c;
      },
    });
    const view: RunView = {
      runId,
      principalId: event.principalId,
      firstSeq: event.seq,
      createdAt: event.createdAt,
      status: 'streaming',
      message: { id: runId, role: 'assistant', parts: [] },
      childThreads: {},
    };
    const state: RunState = { view, controller, closed: false, done: Promise.resolve() };
    state.done = (async () => {
      const messages = readUIMessageStream<UIMessage>({
        message: view.message,
        stream,
        terminateOnError: false,
        onError: () => undefined,
      });
      for await (const message of messages) {
        view.message = message;
        this.#notify();
      }
    })().catch(() => undefined);
    this.#runs.set(runId, state);
    this.items.push({ kind: 'run', runId, seq: event.seq });
    return state;
  }

  #closeRun(run: RunState): void {
    if (run.closed) return;
    run.closed = true;
    try {
      run.controller?.close();
    } catch {
      // already closed
    }
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

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

export interface ToolPartView {
  toolCallId: string;
  toolName: string;
  state: string;
  input: unknown;
  output: unknown;
  errorText: string | undefined;
}

/** A tool part of a UI message (static `tool-NAME` or `dynamic-tool`), or null. */
export function toolPartOf(part: UIMessage['parts'][number]): ToolPartView | null {
  const p = part as {
    type: string;
    toolCallId?: string;
    toolName?: string;
    state?: string;
    input?: unknown;
    output?: unknown;
    errorText?: string;
  };
  if (p.type === 'dynamic-tool' || p.type.startsWith('tool-')) {
    if (typeof p.toolCallId !== 'string') return null;
    const toolName = p.type === 'dynamic-tool' ? (p.toolName ?? 'tool') : p.type.slice('tool-'.length);
    return {
      toolCallId: p.toolCallId,
      toolName,
      state: p.state ?? 'input-available',
      input: p.input,
      output: p.output,
      errorText: p.errorText,
    };
  }
  return null;
}
