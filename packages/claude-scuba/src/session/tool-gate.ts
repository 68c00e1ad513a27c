import type { CanUseTool, Options, PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import type { NewEvent, Role } from '@bubble/protocol';
import type { ToolCatalog, ToolClient } from '@bubble/sdk';
import type { Logger } from 'pino';
import { privatePathTouched } from '@bubble/engine';
import type { ApproverPolicy } from '../config/config-schema.js';
import {
  ApprovalRegistry,
  approversOnThread,
  isAllowedApprover,
  noApproverMessage,
  type ApprovalDecision,
  type ObserveResult,
  type ParkedCall,
} from './approval-registry.js';
import { BUBBLE_MCP_NAME, BUBBLE_MCP_PREFIX, buildBubbleMcpServer, McpCallBroker } from './bubble-mcp.js';
import type { Clock } from '../translate/delta-coalescer.js';

export interface ToolGateOptions {
  threadId: string;
  selfId: string;
  approvers: ApproverPolicy;
  timeoutMs: number;
  /** Live roles on the thread. */
  roles: ReadonlyMap<string, Role>;
  /** The owners of the bot principal. */
  botOwners: ReadonlySet<string>;
  /** Display names, for the words of an automatic denial. */
  nameOf: (principalId: string) => string;
  /** The thread's workspace: file tools reach anything inside it. */
  cwd: () => string;
  /** Paths no tool may read or change (the bot's config, state, CLI home, other workspaces). */
  privatePaths: readonly string[];
  clock: Clock;
  logger: Logger;
  /** Appends to the session's thread (automatic denials). */
  append: (events: NewEvent[]) => Promise<unknown>;
  /** Resolves once every event produced so far is on the thread. */
  flush: () => Promise<void>;
  currentRunId: () => string | undefined;
  /** A call parked while its CLI was closed (slot given up) was settled: the session asks Claude again. */
  onDetachedAnswer?: (call: ParkedCall, decision: ApprovalDecision) => void;
  /** The thread and run a tool call belongs to (a sub-agent's subthread for its calls). */
  callContext: (toolCallId: string) => { threadId: string; runId: string | undefined };
  /** Puts the call's `tool-approval-request` on the thread, where its approvers can answer; resolves once it is there. */
  announce: (request: ApprovalAnnouncement) => Promise<void>;
  /** A parked call was settled (answered, timed out, interrupted). */
  onSettled?: (toolCallId: string) => void;
  /** The call was refused: its end reads as a denial with this reason. */
  onDenied: (toolCallId: string, reason: string) => void;
  tools?: { catalog: ToolCatalog; client: ToolClient } | undefined;
}

/** What a `tool-approval-request` says (protocol.md, "Tool approvals"). */
export interface ApprovalAnnouncement {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  approvers: string[];
  /** Set when a sub-agent makes the call. */
  agentId?: string | undefined;
}

/**
 * Everything between Claude wanting a tool and the tool running: the SDK's
 * `canUseTool` parked in the approval registry until someone allowed answers
 * on the thread, automatic denials written to the thread (its own audit log),
 * and the local `bubble` MCP server whose calls are approved the same way.
 * A call that touches the bot's private files, or that nobody on the thread
 * may approve, is refused at once instead of waiting out the timeout.
 */
export class ToolGate {
  readonly approvals: ApprovalRegistry;
  readonly #options: ToolGateOptions;
  readonly #mcpCalls = new McpCallBroker();

  constructor(options: ToolGateOptions) {
    this.#options = options;
    this.approvals = new ApprovalRegistry({
      clock: options.clock,
      timeoutMs: options.timeoutMs,
      isApprover: (p) => isAllowedApprover(options.approvers, p, this.#context()),
      onSettled: (call, decision) => this.#onSettled(call, decision),
      onDetachedAnswer: (call, decision) => {
        // The next time Claude makes this same call (the resumed CLI asks again), this answer stands.
        // Only for this run, and only while an answer would still be waited for.
        const runId = options.currentRunId();
        if ((decision.source === 'approval' || decision.source === 'result') && runId !== undefined) {
          this.#answered.push({
            toolName: call.toolName,
            input: JSON.stringify(call.input),
            decision,
            runId,
            at: options.clock.now(),
          });
        }
        options.onDetachedAnswer?.(call, decision);
      },
    });
  }

  /** Answers given while their CLI was closed, used once when Claude makes the same call again. */
  readonly #answered: Array<{
    toolName: string;
    input: string;
    decision: ApprovalDecision;
    runId: string;
    at: number;
  }> = [];

  /** Forgets answers kept for calls to be made again (their run ended, or was interrupted). */
  forgetAnswered(): void {
    this.#answered.length = 0;
  }

  /** Feeds a thread event to the registry and logs what it did. */
  observe(event: { type: string; principalId: string; data: unknown; seq: number }): ObserveResult {
    const answer = this.approvals.observe(event);
    if (answer.kind === 'not_allowed')
      this.#options.logger.warn(
        { seq: event.seq, toolCallId: answer.toolCallId, by: answer.principalId },
        'approval from a principal who may not approve; ignored',
      );
    else if (answer.kind === 'resolved')
      this.#options.logger.info(
        { seq: event.seq, toolCallId: answer.toolCallId, decision: answer.decision.behavior, by: event.principalId },
        'tool call answered',
      );
    return answer;
  }

  readonly canUseTool: CanUseTool = async (toolName, input, options) => {
    const o = this.#options;
    const toolCallId = options.toolUseID;
    // The tool call's chunk must be on the thread before anyone is asked to answer it.
    await o.flush();
    const touched = privatePathTouched(input, {
      cwd: o.cwd(),
      blockedPath: options.blockedPath,
      privatePaths: o.privatePaths,
    });
    if (touched !== undefined) {
      o.logger.warn({ toolCallId, toolName, path: touched }, 'tool call touches a private path; refused');
      return this.#refuse(
        toolCallId,
        `Denied: ${touched} is private to this bot (its configuration, its state, or another thread's workspace); no tool may read or change it.`,
      );
    }
    const approvers = approversOnThread(o.approvers, this.#context());
    if (approvers.length === 0) {
      o.logger.warn(
        { toolCallId, toolName, policy: o.approvers },
        'tool call needs approval and nobody who may approve is on the thread; refused',
      );
      return this.#refuse(
        toolCallId,
        noApproverMessage(toolName, o.approvers, { ...this.#context(), nameOf: o.nameOf }),
      );
    }
    // The same call, with the same input, in the same run, that was answered while its CLI was closed.
    const now = o.clock.now();
    const earlier = this.#answered.findIndex(
      (a) =>
        a.toolName === toolName &&
        a.input === JSON.stringify(input) &&
        a.runId === o.currentRunId() &&
        now - a.at <= o.timeoutMs,
    );
    if (earlier !== -1) {
      const { decision } = this.#answered.splice(earlier, 1)[0]!;
      o.logger.info(
        { toolCallId, toolName, decision: decision.behavior, by: decision.by },
        'the same call again: answered while its CLI was closed',
      );
      return this.#decided(toolCallId, toolName, input, decision);
    }
    o.logger.info({ toolCallId, toolName, agentId: options.agentID, approvers }, 'tool call waits for approval');
    const decision = this.approvals.park({ toolCallId, toolName, input, signal: options.signal });
    try {
      await o.announce({ toolCallId, toolName, input, approvers, agentId: options.agentID });
    } catch (error) {
      // Nobody would see it, so nobody could answer: no waiting out the timeout.
      o.logger.error({ err: error, toolCallId }, 'approval request not recorded on the thread; denying the call');
      this.approvals.cancel(
        toolCallId,
        `Denied: the request for approval of ${toolName} could not be put on the thread.`,
      );
    }
    return this.#decided(toolCallId, toolName, input, await decision);
  };

  /** What Claude gets for an answered call. */
  #decided(
    toolCallId: string,
    toolName: string,
    input: Record<string, unknown>,
    answered: ApprovalDecision,
  ): PermissionResult {
    const o = this.#options;
    if (toolName === 'AskUserQuestion' && answered.behavior === 'deny' && answered.result && !answered.result.isError) {
      // A person answered Claude's question: the answers go in as the tool's input (engine-notes §1.1).
      const answers = askUserAnswers(input, answered.result.output);
      if (answers) return { behavior: 'allow', updatedInput: { ...input, answers } };
    }
    if (toolName.startsWith(BUBBLE_MCP_PREFIX) && (answered.behavior === 'allow' || answered.source === 'result')) {
      // A sub-agent's call works on its subthread by default, the main conversation's on this thread.
      const where = o.callContext(toolCallId);
      const context = {
        runThreadId: o.threadId,
        threadId: where.threadId,
        runId: where.runId ?? 'unknown',
        toolCallId,
      };
      if (answered.behavior === 'deny' && answered.result) {
        // A local tool's handler is ours: a participant's result reaches Claude as the tool's own, not as a refusal.
        this.#mcpCalls.approved({ ...context, supplied: answered.result });
        return { behavior: 'allow' };
      }
      this.#mcpCalls.approved(context);
    }
    if (answered.behavior === 'deny' && answered.source !== 'result') o.onDenied(toolCallId, answered.message);
    return toPermission(answered);
  }

  /** The approved local-tool calls waiting for their handler (a claimed spare's MCP server takes them here). */
  get mcpCalls(): McpCallBroker {
    return this.#mcpCalls;
  }

  /** A fresh `bubble` MCP server for a new query (none when no catalog was given). */
  mcpServers(): Options['mcpServers'] | undefined {
    const tools = this.#options.tools;
    if (!tools) return undefined;
    const server = buildBubbleMcpServer({
      catalog: tools.catalog,
      client: tools.client,
      principalId: this.#options.selfId,
      broker: this.#mcpCalls,
    });
    return { [BUBBLE_MCP_NAME]: server };
  }

  #context() {
    return { selfId: this.#options.selfId, roles: this.#options.roles, botOwners: this.#options.botOwners };
  }

  /** Refuses a call without parking it, and says so on the thread. */
  #refuse(toolCallId: string, message: string): PermissionResult {
    this.#options.onDenied(toolCallId, message);
    this.#recordDenial(toolCallId, message);
    return { behavior: 'deny', message };
  }

  #recordDenial(toolCallId: string, reason: string): void {
    this.#options
      .append([
        {
          type: 'tool_call_approval',
          data: { toolCallId, decision: 'deny', reason },
          clientEventId: `approval:${toolCallId}`,
        },
      ])
      .catch((error: unknown) =>
        this.#options.logger.error({ err: error, toolCallId }, 'automatic denial not recorded on the thread'),
      );
  }

  #onSettled(call: ParkedCall, decision: ApprovalDecision): void {
    this.#options.onSettled?.(call.toolCallId);
    if (decision.source === 'approval' || decision.source === 'result') return;
    this.#options.logger.warn(
      { toolCallId: call.toolCallId, source: decision.source },
      'tool call denied automatically',
    );
    this.#recordDenial(call.toolCallId, decision.behavior === 'deny' ? decision.message : '');
  }
}

function toPermission(decision: ApprovalDecision): PermissionResult {
  if (decision.behavior === 'allow')
    return decision.updatedInput ? { behavior: 'allow', updatedInput: decision.updatedInput } : { behavior: 'allow' };
  return { behavior: 'deny', message: decision.message };
}

/**
 * The `answers` of an AskUserQuestion call from a participant's
 * `tool_call_result` output: an object of question → answer as given, or
 * one string that answers every question. Undefined when it cannot be read.
 */
export function askUserAnswers(input: Record<string, unknown>, output: unknown): Record<string, string> | undefined {
  const questions = Array.isArray(input.questions)
    ? input.questions
        .map((q) => (typeof q === 'object' && q !== null ? (q as { question?: unknown }).question : undefined))
        .filter((q): q is string => typeof q === 'string')
    : [];
  if (typeof output === 'string' && output.trim() !== '' && questions.length > 0)
    return Object.fromEntries(questions.map((q) => [q, output]));
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
    const source = (output as { answers?: unknown }).answers ?? output;
    if (typeof source !== 'object' || source === null || Array.isArray(source)) return undefined;
    const entries = Object.entries(source).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return undefined;
}
