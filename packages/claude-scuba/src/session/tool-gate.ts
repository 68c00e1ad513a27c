import { randomUUID } from 'node:crypto';
import type { CanUseTool, Options, PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import type { NewEvent, Role } from '@bubble/protocol';
import type { ToolCatalog, ToolClient } from '@bubble/sdk';
import type { Logger } from 'pino';
import type { ApproverPolicy } from './approval-registry.js';
import { ApprovalRegistry, isAllowedApprover, type ApprovalDecision, type ObserveResult, type ParkedCall } from './approval-registry.js';
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
  botOwners?: ReadonlySet<string> | undefined;
  clock: Clock;
  logger: Logger;
  /** Appends to the session's thread (automatic denials). */
  append: (events: NewEvent[]) => Promise<unknown>;
  /** Resolves once every event produced so far is on the thread. */
  flush: () => Promise<void>;
  currentRunId: () => string | undefined;
  tools?: { catalog: ToolCatalog; client: ToolClient } | undefined;
}

/**
 * Everything between Claude wanting a tool and the tool running: the SDK's
 * `canUseTool` parked in the approval registry until someone allowed answers
 * on the thread, automatic denials written to the thread (its own audit log),
 * and the local `bubble` MCP server whose calls are approved the same way.
 */
export class ToolGate {
  readonly approvals: ApprovalRegistry;
  readonly #o: ToolGateOptions;
  readonly #mcpCalls = new McpCallBroker();

  constructor(options: ToolGateOptions) {
    this.#o = options;
    this.approvals = new ApprovalRegistry({
      clock: options.clock,
      timeoutMs: options.timeoutMs,
      isApprover: (p) => isAllowedApprover(options.approvers, p, { selfId: options.selfId, roles: options.roles, ...(options.botOwners ? { botOwners: options.botOwners } : {}) }),
      onSettled: (call, decision) => this.#onSettled(call, decision),
    });
  }

  /** Feeds a thread event to the registry and logs what it did. */
  observe(event: { type: string; principalId: string; data: unknown; seq: number }): ObserveResult {
    const answer = this.approvals.observe(event);
    if (answer.kind === 'not_allowed') this.#o.logger.warn({ seq: event.seq, toolCallId: answer.toolCallId, by: answer.principalId }, 'approval from a principal who may not approve; ignored');
    else if (answer.kind === 'resolved') this.#o.logger.info({ seq: event.seq, toolCallId: answer.toolCallId, decision: answer.decision.behavior, by: event.principalId }, 'tool call answered');
    return answer;
  }

  readonly canUseTool: CanUseTool = async (toolName, input, options) => {
    // The tool call's chunk must be on the thread before anyone is asked to answer it.
    await this.#o.flush();
    this.#o.logger.info({ toolCallId: options.toolUseID, toolName, agentId: options.agentID }, 'tool call waits for approval');
    const decision = await this.approvals.park({ toolCallId: options.toolUseID, toolName, input, signal: options.signal });
    if (toolName === 'AskUserQuestion' && decision.behavior === 'deny' && decision.result && !decision.result.isError) {
      // A person answered Claude's question: the answers go in as the tool's input (engine-notes §1.1).
      const answers = askUserAnswers(input, decision.result.output);
      if (answers) return { behavior: 'allow', updatedInput: { ...input, answers } };
    }
    if (decision.behavior === 'allow' && toolName.startsWith(BUBBLE_MCP_PREFIX)) {
      this.#mcpCalls.approved(toolName, { threadId: this.#o.threadId, runId: this.#o.currentRunId() ?? 'unknown', toolCallId: options.toolUseID });
    }
    return toPermission(decision);
  };

  /** A fresh `bubble` MCP server for a new query (none when no catalog was given). */
  mcpServers(): Options['mcpServers'] | undefined {
    const tools = this.#o.tools;
    if (!tools) return undefined;
    const server = buildBubbleMcpServer({
      catalog: tools.catalog,
      client: tools.client,
      principalId: this.#o.selfId,
      broker: this.#mcpCalls,
      fallback: () => ({ threadId: this.#o.threadId, runId: this.#o.currentRunId() ?? 'unknown', toolCallId: `mcp-${randomUUID()}` }),
    });
    return { [BUBBLE_MCP_NAME]: server };
  }

  #onSettled(call: ParkedCall, decision: ApprovalDecision): void {
    if (decision.source === 'approval' || decision.source === 'result') return;
    this.#o.logger.warn({ toolCallId: call.toolCallId, source: decision.source }, 'tool call denied automatically');
    const reason = decision.behavior === 'deny' ? decision.message : '';
    this.#o
      .append([{ type: 'tool_call_approval', data: { toolCallId: call.toolCallId, decision: 'deny', reason }, clientEventId: `approval:${call.toolCallId}` }])
      .catch((error: unknown) => this.#o.logger.error({ err: error, toolCallId: call.toolCallId }, 'automatic denial not recorded on the thread'));
  }
}

function toPermission(decision: ApprovalDecision): PermissionResult {
  if (decision.behavior === 'allow') return decision.updatedInput ? { behavior: 'allow', updatedInput: decision.updatedInput } : { behavior: 'allow' };
  return { behavior: 'deny', message: decision.message };
}

/**
 * The `answers` of an AskUserQuestion call from a participant's
 * `tool_call_result` output: an object of question → answer as given, or
 * one string that answers every question. Undefined when it cannot be read.
 */
export function askUserAnswers(input: Record<string, unknown>, output: unknown): Record<string, string> | undefined {
  const questions = Array.isArray(input.questions)
    ? input.questions.map((q) => (typeof q === 'object' && q !== null ? (q as { question?: unknown }).question : undefined)).filter((q): q is string => typeof q === 'string')
    : [];
  if (typeof output === 'string' && output.trim() !== '' && questions.length > 0) return Object.fromEntries(questions.map((q) => [q, output]));
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
    const source = (output as { answers?: unknown }).answers ?? output;
    if (typeof source !== 'object' || source === null || Array.isArray(source)) return undefined;
    const entries = Object.entries(source).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return undefined;
}
