import {
  assertNever,
  type AssistantLike,
  type ContentBlockLike,
  type NarrowedSdkMessage,
  type ResultLike,
  type StreamEventLike,
  type UserLike,
} from '@bubble/engine';
import type { UiChunk } from '@bubble/protocol';
import { ScubaError } from '../errors.js';
import type { BubbleEventDraft } from './bubble-draft.js';
import { outcomeFromResult, type InterruptNote, type RunOutcome } from './run-outcome.js';
import { contentText, uuidsOf, type TranslateStep, type TranslatorSignal } from './translator-signal.js';

export { contentText, type TranslateStep, type TranslatorSignal } from './translator-signal.js';

/** The sub-agent tool: `Agent` on the wire, `Task` in older CLIs and in init.tools (engine-notes §2.4). */
export const SUBAGENT_TOOL_NAMES: ReadonlySet<string> = new Set(['Agent', 'Task']);

export interface SdkToBubbleOptions {
  /** null for a thread's main conversation; a sub-agent's tool_use id for its subthread. */
  scope: string | null;
  /** Run ids for turns nobody asked for (a background sub-agent finishing starts one). */
  newRunId: () => string;
  /** The clock, for rate-limit reset times. */
  now: () => Date;
  /**
   * Tool calls the bot refused (toolCallId → reason), filled in by the owner as it
   * refuses them: their error result reads as `tool-output-denied`, not a failure.
   */
  denials?: ReadonlyMap<string, string>;
}

interface BeginRun {
  runId: string;
  replyTo?: number[];
  /** The uuid of the pushed user message, echoed as user_message_uuid(s). */
  userMessageUuid?: string;
}

type BlockKind = 'text' | 'reasoning';

interface RunState {
  runId: string;
  userMessageUuid: string | undefined;
  counter: number;
  blockCounter: number;
  /** Streamed blocks of the current API message, by content-block index. */
  streamed: Map<number, { kind: BlockKind; id: string; covered: boolean }>;
  assistantError?: string;
  assistantErrorText?: string;
  interrupt?: InterruptNote;
}

/**
 * Turns the SDK's messages into Bubble events, one message at a time. Pure
 * apart from its own state (open runs, open blocks): ids and the clock come
 * from outside, nothing is appended or logged here. Text and reasoning come
 * from `stream_event` deltas where the CLI streams them, and from complete
 * `assistant` blocks where it does not (sub-agents, errors).
 */
export class SdkToBubble {
  readonly #options: SdkToBubbleOptions;
  /** Runs begun by the owner, in order, that have not finished. */
  readonly #pending: RunState[] = [];
  /** The run content is flowing into, if any. */
  #active: RunState | undefined;
  readonly #subagents = new Set<string>();
  /** Uuids of steer pushes (`shouldQuery: false`) not yet seen in a result. */
  readonly #steers = new Set<string>();
  /** Messages pushed while a turn runs (`shouldQuery` true), by uuid, with the seqs they answer; in push order. */
  readonly #asides = new Map<string, number[]>();
  #totalCostUsd = 0;
  /** Tool calls of this scope with a tool_use and no tool_result yet. */
  readonly #openCalls = new Set<string>();
  /** The reset time of the last rate_limit_event, for a rate-limited run's error. */
  #rateLimitResetsAt: string | undefined;

  constructor(options: SdkToBubbleOptions) {
    this.#options = options;
  }

  /** The run the CLI is producing output for, or else the oldest begun one; undefined when idle. */
  get currentRunId(): string | undefined {
    return (this.#active ?? this.#pending[0])?.runId;
  }

  get isIdle(): boolean {
    return this.currentRunId === undefined;
  }

  /** Opens a run for a user turn the owner is about to push: `run_started` with `replyTo`. */
  beginRun(begin: BeginRun): BubbleEventDraft[] {
    if (this.#find(begin.runId)) throw new ScubaError('run_state', `run ${begin.runId} is already open`);
    const run = newRun(begin.runId, begin.userMessageUuid);
    this.#pending.push(run);
    return [this.#started(run, begin.replyTo)];
  }

  /**
   * Remembers a push made with `shouldQuery: false` (the steer lane). When it
   * is folded into the running turn its uuid shows up on that turn's result;
   * when it arrives between turns the CLI answers it with a result of its own
   * and no model call, which must not become a run.
   */
  noteSteer(uuid: string): void {
    this.#steers.add(uuid);
  }

  /**
   * Remembers a message pushed while a turn runs (`shouldQuery` true). The CLI
   * either takes it into that turn (a tool step is under way: the turn's
   * result names its uuid) or runs it as the next turn by itself right after
   * (engine-notes §2.5, §9; also after an interrupt, whose receipt lists it as
   * `still_queued`). At the result, the first case adds its seqs to the run's
   * `run_finished.replyTo`; in the second a follow-up run opens at once, and
   * the CLI's next turn flows into it. Asides that come back together share
   * that one follow-up run, as the CLI batches them into one turn.
   */
  noteAside(uuid: string, replyTo: readonly number[]): void {
    this.#asides.set(uuid, [...replyTo]);
  }

  /** A new CLI process starts its cost count at zero (the SDK's total is per query); calls of the old one are gone. */
  newQuery(): void {
    this.#totalCostUsd = 0;
    this.#openCalls.clear();
  }

  /** Tool calls made and not answered yet (running, or waiting for approval). */
  get openCalls(): ReadonlySet<string> {
    return this.#openCalls;
  }

  /** Remembers who asked to interrupt a run, for its `run_finished`. */
  noteInterrupt(runId: string, note: InterruptNote): void {
    const run = this.#find(runId);
    if (run) run.interrupt = note;
  }

  /**
   * Closes a run without a result message: a sub-agent's run at its tool
   * result or task notification, or any run when the CLI died. Open blocks
   * are ended first.
   */
  finishRun(runId: string, outcome: RunOutcome): BubbleEventDraft[] {
    const run = this.#find(runId);
    if (!run) throw new ScubaError('run_state', `run ${runId} is not open`);
    return this.#finish(run, outcome);
  }

  /**
   * Closes every open run without a result (the CLI died, the bot stops). Asides
   * pushed into the turn that ends here are answered by its end, like the
   * messages it was started for: the run's `run_finished.replyTo` names them.
   */
  finishAll(outcome: RunOutcome): BubbleEventDraft[] {
    const events: BubbleEventDraft[] = [];
    const asides = [...this.#asides.values()].flat().sort((a, b) => a - b);
    this.#asides.clear();
    this.#steers.clear();
    this.openRunIds.forEach((runId, index) => {
      events.push(...this.#finish(this.#find(runId)!, outcome, index === 0 ? asides : []));
    });
    return events;
  }

  /** A chunk the owner puts on an open run: something about the run that is not Claude's words. */
  chunk(runId: string, chunk: UiChunk): BubbleEventDraft {
    const run = this.#find(runId);
    if (!run) throw new ScubaError('run_state', `run ${runId} is not open`);
    return this.#part(run, chunk);
  }

  /** Every open run, for closing them all when the query ends. */
  get openRunIds(): string[] {
    const ids = this.#pending.map((run) => run.runId);
    if (this.#active && !ids.includes(this.#active.runId)) ids.unshift(this.#active.runId);
    return ids;
  }

  push(narrowed: NarrowedSdkMessage): TranslateStep {
    const step: TranslateStep = { events: [], signals: [] };
    switch (narrowed.kind) {
      case 'init':
        step.signals.push({ kind: 'session', sessionId: narrowed.message.session_id, model: narrowed.message.model });
        break;
      case 'stream_event':
        if (this.#routed(narrowed, narrowed.message.parent_tool_use_id, step)) break;
        this.#streamEvent(narrowed.message, step);
        break;
      case 'assistant':
        if (this.#routed(narrowed, narrowed.message.parent_tool_use_id, step)) break;
        this.#assistant(narrowed.message, step);
        break;
      case 'user':
        if (this.#routed(narrowed, narrowed.message.parent_tool_use_id, step)) break;
        this.#user(narrowed.message, step);
        break;
      case 'result':
        this.#result(narrowed.message, step);
        break;
      case 'task_started':
      case 'task_progress':
      case 'task_updated':
      case 'task_notification': {
        const m = narrowed.message;
        const signal: TranslatorSignal = { kind: 'task', subtype: narrowed.kind, taskId: m.task_id };
        if (m.tool_use_id !== undefined) signal.toolUseId = m.tool_use_id;
        const status =
          narrowed.kind === 'task_notification'
            ? narrowed.message.status
            : narrowed.kind === 'task_updated'
              ? narrowed.message.patch.status
              : undefined;
        if (status !== undefined) signal.status = status;
        if (narrowed.kind === 'task_started' && narrowed.message.is_backgrounded !== undefined)
          signal.background = narrowed.message.is_backgrounded;
        step.signals.push(signal);
        break;
      }
      case 'api_retry':
        step.signals.push({
          kind: 'api_retry',
          attempt: narrowed.message.attempt,
          maxRetries: narrowed.message.max_retries,
          errorStatus: narrowed.message.error_status,
          retryDelayMs: narrowed.message.retry_delay_ms,
        });
        break;
      case 'permission_denied':
        step.signals.push({
          kind: 'permission_denied',
          toolName: narrowed.message.tool_name,
          toolUseId: narrowed.message.tool_use_id,
          message: narrowed.message.message,
        });
        break;
      case 'rate_limit': {
        const info = narrowed.message.rate_limit_info;
        const signal: Extract<TranslatorSignal, { kind: 'rate_limit' }> = { kind: 'rate_limit' };
        if (info.status !== undefined) signal.status = info.status;
        if (info.rateLimitType !== undefined) signal.rateLimitType = info.rateLimitType;
        if (typeof info.resetsAt === 'number' && Number.isFinite(info.resetsAt)) {
          signal.resetsAt = new Date(info.resetsAt * 1000).toISOString();
          this.#rateLimitResetsAt = signal.resetsAt;
        }
        step.signals.push(signal);
        break;
      }
      case 'status':
      case 'background_tasks_changed':
      case 'command_lifecycle':
      case 'ignored':
        break;
      case 'unknown':
        step.signals.push({ kind: 'skipped', reason: narrowed.reason });
        break;
      default:
        return assertNever(narrowed, 'SDK message kind');
    }
    return step;
  }

  #routed(narrowed: NarrowedSdkMessage, ptu: string | null | undefined, step: TranslateStep): boolean {
    const parent = ptu ?? null;
    if (parent === this.#options.scope) return false;
    if (parent === null) {
      // A main-conversation message fed to a sub-agent's translator: not ours.
      step.signals.push({
        kind: 'skipped',
        reason: `message without parent_tool_use_id fed to the translator of ${this.#options.scope}`,
      });
    } else {
      step.signals.push({ kind: 'routed', parentToolUseId: parent, message: narrowed });
    }
    return true;
  }

  #streamEvent(message: StreamEventLike, step: TranslateStep): void {
    const event = message.event;
    switch (event.type) {
      case 'message_start': {
        const run = this.#runFor(message, step);
        this.#endOpenBlocks(run, step);
        return;
      }
      case 'content_block_start': {
        const type = event.content_block?.type;
        const kind: BlockKind | undefined = type === 'text' ? 'text' : type === 'thinking' ? 'reasoning' : undefined;
        if (kind === undefined || event.index === undefined) return;
        const run = this.#runFor(message, step);
        const id = `${run.runId}:${kind === 'text' ? 't' : 'r'}${run.blockCounter++}`;
        run.streamed.set(event.index, { kind, id, covered: false });
        step.events.push(this.#part(run, { type: kind === 'text' ? 'text-start' : 'reasoning-start', id }));
        const initial = kind === 'text' ? event.content_block?.text : event.content_block?.thinking;
        if (typeof initial === 'string' && initial !== '')
          step.events.push(this.#part(run, deltaChunk(kind, id, initial)));
        return;
      }
      case 'content_block_delta': {
        const run = this.#active;
        const block = event.index === undefined ? undefined : run?.streamed.get(event.index);
        if (!run || !block) return;
        const delta = event.delta;
        if (
          block.kind === 'text' &&
          delta?.type === 'text_delta' &&
          typeof delta.text === 'string' &&
          delta.text !== ''
        ) {
          step.events.push(this.#part(run, deltaChunk('text', block.id, delta.text)));
        } else if (
          block.kind === 'reasoning' &&
          delta?.type === 'thinking_delta' &&
          typeof delta.thinking === 'string' &&
          delta.thinking !== ''
        ) {
          step.events.push(this.#part(run, deltaChunk('reasoning', block.id, delta.thinking)));
        }
        return;
      }
      case 'content_block_stop': {
        const run = this.#active;
        const block = event.index === undefined ? undefined : run?.streamed.get(event.index);
        if (!run || !block || event.index === undefined) return;
        run.streamed.delete(event.index);
        step.events.push(this.#part(run, { type: block.kind === 'text' ? 'text-end' : 'reasoning-end', id: block.id }));
        return;
      }
      default:
        // message_delta, message_stop, ping: nothing to say on the thread.
        return;
    }
  }

  #assistant(message: AssistantLike, step: TranslateStep): void {
    const run = this.#runFor(message, step);
    for (const block of message.message.content as ContentBlockLike[]) {
      if (block.type === 'text' || block.type === 'thinking') {
        const kind: BlockKind = block.type === 'text' ? 'text' : 'reasoning';
        const text = kind === 'text' ? block.text : block.thinking;
        if (message.error !== undefined) {
          // "API Error: …": said in plain words on run_finished instead.
          run.assistantError = message.error;
          if (typeof text === 'string') run.assistantErrorText = text;
          continue;
        }
        const streamed = [...run.streamed.values()].find((b) => b.kind === kind && !b.covered);
        if (streamed) {
          streamed.covered = true;
          continue;
        }
        if (typeof text !== 'string' || text === '') continue;
        // Not streamed (a sub-agent's block, or partial messages off): the whole block at once.
        const id = `${run.runId}:${kind === 'text' ? 't' : 'r'}${run.blockCounter++}`;
        step.events.push(this.#part(run, { type: kind === 'text' ? 'text-start' : 'reasoning-start', id }));
        step.events.push(this.#part(run, deltaChunk(kind, id, text)));
        step.events.push(this.#part(run, { type: kind === 'text' ? 'text-end' : 'reasoning-end', id }));
      } else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
        this.#openCalls.add(block.id);
        if (SUBAGENT_TOOL_NAMES.has(block.name)) {
          this.#subagents.add(block.id);
          step.signals.push({
            kind: 'subagent_started',
            runId: run.runId,
            toolCallId: block.id,
            toolName: block.name,
            input: block.input ?? {},
          });
        } else {
          step.events.push(
            this.#part(run, {
              type: 'tool-input-available',
              toolCallId: block.id,
              toolName: block.name,
              input: block.input ?? {},
            }),
          );
        }
      }
      // redacted_thinking, server tool blocks, …: nothing to show.
    }
  }

  #user(message: UserLike, step: TranslateStep): void {
    const content = message.message.content;
    // A string is a synthetic text ("[Request interrupted by user]") or a sub-agent's prompt: not shown.
    if (typeof content === 'string') return;
    const results = (content as ContentBlockLike[]).filter(
      (b) => b.type === 'tool_result' && typeof b.tool_use_id === 'string',
    );
    if (results.length === 0) return;
    const run = this.#runFor({}, step);
    for (const block of results) {
      const toolCallId = block.tool_use_id!;
      this.#openCalls.delete(toolCallId);
      const denial = block.is_error === true ? this.#options.denials?.get(toolCallId) : undefined;
      if (denial !== undefined) {
        step.events.push(
          this.#part(run, { type: 'tool-output-denied', toolCallId, providerMetadata: { bubble: { reason: denial } } }),
        );
      } else if (block.is_error === true) {
        step.events.push(
          this.#part(run, { type: 'tool-output-error', toolCallId, errorText: contentText(block.content) }),
        );
      } else {
        step.events.push(this.#part(run, { type: 'tool-output-available', toolCallId, output: block.content ?? null }));
      }
      if (this.#subagents.has(toolCallId)) {
        const result = message.tool_use_result;
        const status =
          typeof result === 'object' && result !== null ? (result as { status?: unknown }).status : undefined;
        step.signals.push({
          kind: 'subagent_tool_result',
          runId: run.runId,
          toolCallId,
          background: status === 'async_launched',
          isError: block.is_error === true,
          result: result ?? null,
        });
      }
    }
  }

  #result(message: ResultLike, step: TranslateStep): void {
    const uuids = uuidsOf(message);
    const steered = uuids.filter((uuid) => this.#steers.has(uuid));
    for (const uuid of steered) this.#steers.delete(uuid);
    if (!this.#active && steered.length > 0 && steered.length === uuids.length) {
      step.signals.push({ kind: 'steer_absorbed', uuids: steered });
      return;
    }
    const run = this.#active ?? this.#matchPending(message) ?? this.#openUnsolicited(step);
    const outcome = outcomeFromResult({
      result: message,
      assistantError: run.assistantError,
      assistantErrorText: run.assistantErrorText,
      interrupt: run.interrupt,
      rateLimitResetsAt: this.#rateLimitResetsAt,
      previousTotalCostUsd: this.#totalCostUsd,
      now: this.#options.now(),
    });
    if (typeof message.total_cost_usd === 'number') this.#totalCostUsd = message.total_cost_usd;

    // Asides this turn took in (folded into a tool step): answered by this run too.
    const folded = this.#takeAsides(uuids);
    step.events.push(...this.#finish(run, outcome, folded));
    step.signals.push({ kind: 'run_finished', runId: run.runId, outcome });
    // Pushes the CLI batched into this turn (engine-notes §2.5) were answered by it too.
    const answered = new Set(uuids);
    for (const other of [...this.#pending]) {
      if (other.userMessageUuid !== undefined && answered.has(other.userMessageUuid)) {
        const batched: RunOutcome = { status: outcome.status === 'interrupted' ? 'interrupted' : outcome.status };
        if (outcome.error) batched.error = outcome.error;
        step.events.push(...this.#finish(other, batched));
        step.signals.push({ kind: 'run_finished', runId: other.runId, outcome: batched });
      }
    }
    this.#followUp(step);
  }

  /** The seqs of the asides named in `uuids`, forgotten as they are taken. */
  #takeAsides(uuids: readonly string[]): number[] {
    const seqs: number[] = [];
    for (const uuid of uuids) {
      const replyTo = this.#asides.get(uuid);
      if (replyTo === undefined) continue;
      seqs.push(...replyTo);
      this.#asides.delete(uuid);
    }
    return seqs.sort((a, b) => a - b);
  }

  /**
   * Asides still unanswered when the turn they were pushed into ended: the CLI
   * runs them as its next turn by itself. One run opens for all of them now,
   * replying to them, so that turn has somewhere to go.
   */
  #followUp(step: TranslateStep): void {
    if (this.#asides.size === 0 || this.#active !== undefined || this.#pending.length > 0) return;
    const [first] = this.#asides.keys();
    const replyTo = [...this.#asides.values()].flat().sort((a, b) => a - b);
    // The follow-up answers them: they are no longer asides of a running turn.
    this.#asides.clear();
    const run = newRun(this.#options.newRunId(), first);
    this.#pending.push(run);
    step.events.push(this.#started(run, replyTo));
    step.signals.push({ kind: 'run_opened', runId: run.runId, unsolicited: false, followUp: replyTo });
  }

  /** The run a content message belongs to: the active one, a begun one it answers, or a new unsolicited one. */
  #runFor(
    message: { user_message_uuid?: string | undefined; user_message_uuids?: string[] | undefined },
    step: TranslateStep,
  ): RunState {
    if (this.#active) return this.#active;
    const run = this.#matchPending(message) ?? this.#openUnsolicited(step);
    this.#active = run;
    return run;
  }

  #matchPending(message: {
    user_message_uuid?: string | undefined;
    user_message_uuids?: string[] | undefined;
  }): RunState | undefined {
    const uuids = uuidsOf(message);
    if (uuids.length === 0) return this.#pending[0];
    return this.#pending.find((run) => run.userMessageUuid === undefined || uuids.includes(run.userMessageUuid));
  }

  #openUnsolicited(step: TranslateStep): RunState {
    const run = newRun(this.#options.newRunId(), undefined);
    this.#pending.push(run);
    step.events.push(this.#started(run, undefined));
    step.signals.push({ kind: 'run_opened', runId: run.runId, unsolicited: true });
    return run;
  }

  #find(runId: string): RunState | undefined {
    if (this.#active?.runId === runId) return this.#active;
    return this.#pending.find((run) => run.runId === runId);
  }

  #finish(run: RunState, outcome: RunOutcome, alsoAnswered: readonly number[] = []): BubbleEventDraft[] {
    const step: TranslateStep = { events: [], signals: [] };
    this.#endOpenBlocks(run, step);
    // Said in plain words on the thread, not only in run_finished's data: never a silent failure.
    if (outcome.status === 'error' && outcome.error)
      step.events.push(this.#part(run, { type: 'error', errorText: outcome.error.message }));
    const data: Extract<BubbleEventDraft, { type: 'run_finished' }>['data'] = {
      runId: run.runId,
      status: outcome.status,
    };
    if (outcome.error) data.error = outcome.error;
    if (outcome.usage && Object.keys(outcome.usage).length > 0) data.usage = outcome.usage;
    if (outcome.interruptedBy !== undefined) data.interruptedBy = outcome.interruptedBy;
    if (outcome.interruptReason !== undefined) data.interruptReason = outcome.interruptReason;
    if (alsoAnswered.length > 0) data.replyTo = [...alsoAnswered];
    step.events.push({ type: 'run_finished', data, clientEventId: `${run.runId}:${run.counter++}` });
    if (this.#active === run) this.#active = undefined;
    const index = this.#pending.indexOf(run);
    if (index !== -1) this.#pending.splice(index, 1);
    return step.events;
  }

  #endOpenBlocks(run: RunState, step: TranslateStep): void {
    for (const block of run.streamed.values()) {
      step.events.push(this.#part(run, { type: block.kind === 'text' ? 'text-end' : 'reasoning-end', id: block.id }));
    }
    run.streamed.clear();
  }

  #started(run: RunState, replyTo: number[] | undefined): BubbleEventDraft {
    const data: { runId: string; replyTo?: number[] } = { runId: run.runId };
    if (replyTo !== undefined) data.replyTo = replyTo;
    return { type: 'run_started', data, clientEventId: `${run.runId}:${run.counter++}` };
  }

  #part(run: RunState, chunk: UiChunk): BubbleEventDraft {
    return { type: 'message_part', data: { runId: run.runId, chunk }, clientEventId: `${run.runId}:${run.counter++}` };
  }
}

function newRun(runId: string, userMessageUuid: string | undefined): RunState {
  return { runId, userMessageUuid, counter: 0, blockCounter: 0, streamed: new Map() };
}

function deltaChunk(kind: BlockKind, id: string, delta: string): UiChunk {
  return { type: kind === 'text' ? 'text-delta' : 'reasoning-delta', id, delta };
}
