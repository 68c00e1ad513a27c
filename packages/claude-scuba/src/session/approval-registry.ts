import { ToolCallApprovalDataSchema, ToolCallResultDataSchema, type Role } from '@bubble/protocol';
import type { ApproverPolicy } from '../config/config-schema.js';
import { ScubaError } from '../errors.js';
import type { Clock } from '../translate/delta-coalescer.js';
import { systemClock } from '../translate/delta-coalescer.js';

const MAX_EARLY = 100;
const MAX_SETTLED_IDS = 1000;

export type { ApproverPolicy };

export interface ApproverContext {
  /** The bot itself never approves its own calls. */
  selfId: string;
  /** Live roles on the thread the call is parked for. */
  roles: ReadonlyMap<string, Role>;
  /** The owners of the bot principal. */
  botOwners: ReadonlySet<string>;
}

/**
 * Pure: may `principalId` answer parked calls under `policy`? Only people on
 * the thread count (an answer is an event on it): under `bot_owners` the bot's
 * own owners, under `thread_owners` the thread's owners, under `participants`
 * anyone, under a list the listed ones.
 */
export function isAllowedApprover(policy: ApproverPolicy, principalId: string, context: ApproverContext): boolean {
  if (principalId === context.selfId || !context.roles.has(principalId)) return false;
  if (policy === 'bot_owners') return context.botOwners.has(principalId);
  if (policy === 'thread_owners') return context.roles.get(principalId) === 'owner';
  if (policy === 'participants') return true;
  return policy.includes(principalId);
}

/** Pure: the principals on the thread whose answer counts now, in id order. */
export function approversOnThread(policy: ApproverPolicy, context: ApproverContext): string[] {
  return [...context.roles.keys()].filter((p) => isAllowedApprover(policy, p, context)).sort();
}

/**
 * Pure: the words for a call denied because nobody who may approve it is on
 * the thread: who could, and what to do about it.
 */
export function noApproverMessage(
  toolName: string,
  policy: ApproverPolicy,
  context: ApproverContext & { nameOf: (id: string) => string },
): string {
  const named = (ids: Iterable<string>) =>
    [...ids]
      .filter((id) => id !== context.selfId)
      .sort()
      .map((id) => {
        const name = context.nameOf(id);
        return name !== id ? `${name} (${id})` : id;
      });
  const list = (ids: string[]) =>
    ids.length <= 1 ? (ids[0] ?? '') : `${ids.slice(0, -1).join(', ')} or ${ids.at(-1)}`;
  const who =
    policy === 'bot_owners'
      ? context.botOwners.size === 0
        ? 'this bot has no owners, so nobody can approve its tools'
        : `only an owner of this bot may approve its tools: ${list(named(context.botOwners))}, and none of them is on this thread; ask one of them to join it`
      : policy === 'thread_owners'
        ? 'only an owner of this thread may approve tools, and none is on it'
        : policy === 'participants'
          ? 'nobody else is on this thread to approve it'
          : `only ${list(named(policy))} may approve tools here, and none of them is on this thread; ask one of them to join it`;
  return `Denied at once: ${toolName} needs an approval, but ${who}.`;
}

export type DecisionSource =
  /** A `tool_call_approval` from an allowed approver. */
  | 'approval'
  /** A `tool_call_result` from an allowed approver: the tool does not run, their output stands in. */
  | 'result'
  /** Nobody allowed answered in time: fails closed. */
  | 'timeout'
  /** The run was interrupted (or the SDK aborted the call). */
  | 'interrupt'
  /** The session is closing. */
  | 'closed';

export type ApprovalDecision =
  | { behavior: 'allow'; updatedInput?: Record<string, unknown>; by: string; source: 'approval' }
  | {
      behavior: 'deny';
      message: string;
      by: string | null;
      source: DecisionSource;
      result?: { output: unknown; isError: boolean };
    };

export interface ParkRequest {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  /** The SDK's signal for this call: it aborts when the run is interrupted (engine-notes §1.1). */
  signal?: AbortSignal;
}

export interface ParkedCall {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  parkedAt: number;
}

/** What an observed event did, so the owner can log it. */
export type ObserveResult =
  | { kind: 'not_an_answer' }
  | { kind: 'invalid'; reason: string }
  /** No call parked under that id. `kept`: remembered in case the call is parked soon (see `park`). */
  | { kind: 'unknown_call'; toolCallId: string; kept?: boolean }
  | { kind: 'not_allowed'; toolCallId: string; principalId: string }
  | { kind: 'resolved'; toolCallId: string; decision: ApprovalDecision };

export interface ApprovalRegistryOptions {
  timeoutMs: number;
  /** Evaluated when an answer arrives, so role changes on the thread count. */
  isApprover: (principalId: string) => boolean;
  clock?: Clock;
  /** Called once per settled call, after its promise is resolved: the session writes automatic decisions (timeout, interrupt) to the thread. */
  onSettled?: (call: ParkedCall, decision: ApprovalDecision) => void;
  /** A detached call was settled (answered, timed out, cancelled): nobody waits on its promise any more. */
  onDetachedAnswer?: (call: ParkedCall, decision: ApprovalDecision) => void;
}

interface Entry {
  call: ParkedCall;
  resolve: (decision: ApprovalDecision) => void;
  timer: unknown;
  onAbort?: () => void;
  signal?: AbortSignal;
  /** The CLI that asked is gone (its slot was given up): the answer goes to `onDetachedAnswer`. */
  detached?: boolean;
}

/**
 * Parks the SDK's `canUseTool` calls by toolCallId until someone allowed to
 * answers on the thread (seed: "Tool approvals over the network"). Fails
 * closed: no answer within the timeout is a deny. Holds state only; the
 * owner appends events and logs.
 */
export class ApprovalRegistry {
  readonly #options: ApprovalRegistryOptions;
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();
  /**
   * Answers that arrived before their call was parked. The tool call's chunk
   * reaches the thread when the model emits it, a moment before the CLI asks
   * `canUseTool`, so a quick approver can answer first. Kept for the approval
   * timeout, at most MAX_EARLY of them; ids of settled calls are never kept.
   */
  readonly #early = new Map<string, { event: { type: string; principalId: string; data: unknown }; at: number }>();
  readonly #settledIds = new Set<string>();

  constructor(options: ApprovalRegistryOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  get size(): number {
    return this.#entries.size;
  }

  get pending(): ParkedCall[] {
    return [...this.#entries.values()].map((entry) => entry.call);
  }

  park(request: ParkRequest): Promise<ApprovalDecision> {
    if (this.#entries.has(request.toolCallId)) {
      throw new ScubaError('approval_duplicate', `tool call ${request.toolCallId} is already waiting for approval`);
    }
    const call: ParkedCall = {
      toolCallId: request.toolCallId,
      toolName: request.toolName,
      input: request.input,
      parkedAt: this.#clock.now(),
    };
    if (request.signal?.aborted) {
      const decision = this.#auto(call, 'interrupt');
      this.#options.onSettled?.(call, decision);
      return Promise.resolve(decision);
    }
    const promise = new Promise<ApprovalDecision>((resolve) => {
      const entry: Entry = { call, resolve, timer: undefined };
      entry.timer = this.#clock.setTimeout(
        () => this.#settle(request.toolCallId, this.#auto(call, 'timeout')),
        this.#options.timeoutMs,
      );
      if (request.signal) {
        const signal = request.signal;
        entry.signal = signal;
        entry.onAbort = () => this.#settle(request.toolCallId, this.#auto(call, 'interrupt'));
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.#entries.set(request.toolCallId, entry);
    });
    const early = this.#early.get(request.toolCallId);
    if (early) {
      this.#early.delete(request.toolCallId);
      if (this.#clock.now() - early.at <= this.#options.timeoutMs) this.observe(early.event);
    }
    return promise;
  }

  /** Feeds one thread event; resolves a parked call when it is an allowed answer to it. */
  observe(event: { type: string; principalId: string; data: unknown }): ObserveResult {
    if (event.type !== 'tool_call_approval' && event.type !== 'tool_call_result') return { kind: 'not_an_answer' };
    const parsed =
      event.type === 'tool_call_approval'
        ? ToolCallApprovalDataSchema.safeParse(event.data)
        : ToolCallResultDataSchema.safeParse(event.data);
    if (!parsed.success) return { kind: 'invalid', reason: `${event.type} data does not match its schema` };
    const toolCallId = parsed.data.toolCallId;
    if (!this.#entries.has(toolCallId)) {
      if (this.#settledIds.has(toolCallId)) return { kind: 'unknown_call', toolCallId };
      this.#keepEarly(toolCallId, event);
      return { kind: 'unknown_call', toolCallId, kept: true };
    }
    if (!this.#options.isApprover(event.principalId))
      return { kind: 'not_allowed', toolCallId, principalId: event.principalId };

    let decision: ApprovalDecision;
    if (event.type === 'tool_call_approval') {
      const data = ToolCallApprovalDataSchema.parse(event.data);
      if (data.decision === 'allow') {
        decision = { behavior: 'allow', by: event.principalId, source: 'approval' };
        if (data.updatedInput !== undefined) decision.updatedInput = data.updatedInput;
      } else {
        const reason = data.reason?.trim();
        decision = {
          behavior: 'deny',
          by: event.principalId,
          source: 'approval',
          message: reason ? `Denied by ${event.principalId}: ${reason}` : `Denied by ${event.principalId}.`,
        };
      }
    } else {
      const data = ToolCallResultDataSchema.parse(event.data);
      const output = typeof data.output === 'string' ? data.output : JSON.stringify(data.output);
      decision = {
        behavior: 'deny',
        by: event.principalId,
        source: 'result',
        result: { output: data.output, isError: data.isError === true },
        message: data.isError
          ? `The tool was not run: ${event.principalId} answered in its place with an error:\n${output}`
          : `The tool was not run: ${event.principalId} supplied its result instead:\n${output}`,
      };
    }
    this.#settle(toolCallId, decision);
    return { kind: 'resolved', toolCallId, decision };
  }

  isParked(toolCallId: string): boolean {
    return this.#entries.has(toolCallId);
  }

  /** Denies one parked call as interrupted (with `message` in place of the usual words); false when it is not parked. */
  cancel(toolCallId: string, message?: string): boolean {
    const entry = this.#entries.get(toolCallId);
    if (!entry) return false;
    const decision = this.#auto(entry.call, 'interrupt');
    this.#settle(
      toolCallId,
      message !== undefined && decision.behavior === 'deny' ? { ...decision, message } : decision,
    );
    return true;
  }

  /**
   * The CLI waiting on these calls is about to be closed (its slot goes to another thread): the calls
   * stay parked, with their timeout, but the CLI's abort no longer denies them, and their answers go to
   * `onDetachedAnswer`. Returns them.
   */
  detachAll(): ParkedCall[] {
    for (const entry of this.#entries.values()) {
      if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
      entry.detached = true;
    }
    return this.pending;
  }

  /** Whether every parked call is detached (none has a CLI waiting on it). */
  get allDetached(): boolean {
    return this.#entries.size > 0 && [...this.#entries.values()].every((entry) => entry.detached === true);
  }

  /** Denies every parked call (an interrupt, or the session closing). Returns what was cancelled. */
  cancelAll(source: 'interrupt' | 'closed'): ParkedCall[] {
    const calls = this.pending;
    for (const call of calls) this.#settle(call.toolCallId, this.#auto(call, source));
    return calls;
  }

  #auto(call: ParkedCall, source: 'timeout' | 'interrupt' | 'closed'): ApprovalDecision {
    const seconds = Math.round(this.#options.timeoutMs / 1000);
    const message =
      source === 'timeout'
        ? `Denied: nobody allowed to approve ${call.toolName} answered within ${seconds} s.`
        : source === 'interrupt'
          ? `Denied: the run was interrupted while ${call.toolName} waited for approval.`
          : `Denied: the bot stopped while ${call.toolName} waited for approval.`;
    return { behavior: 'deny', by: null, source, message };
  }

  #keepEarly(toolCallId: string, event: { type: string; principalId: string; data: unknown }): void {
    const now = this.#clock.now();
    for (const [id, early] of this.#early) if (now - early.at > this.#options.timeoutMs) this.#early.delete(id);
    if (this.#early.has(toolCallId) && this.#options.isApprover(this.#early.get(toolCallId)!.event.principalId)) return;
    if (this.#early.size >= MAX_EARLY) this.#early.delete(this.#early.keys().next().value!);
    this.#early.set(toolCallId, { event, at: now });
  }

  #settle(toolCallId: string, decision: ApprovalDecision): void {
    const entry = this.#entries.get(toolCallId);
    if (!entry) return;
    this.#entries.delete(toolCallId);
    this.#settledIds.add(toolCallId);
    if (this.#settledIds.size > MAX_SETTLED_IDS) this.#settledIds.delete(this.#settledIds.values().next().value!);
    this.#clock.clearTimeout(entry.timer);
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    entry.resolve(decision);
    this.#options.onSettled?.(entry.call, decision);
    if (entry.detached) this.#options.onDetachedAnswer?.(entry.call, decision);
  }
}
