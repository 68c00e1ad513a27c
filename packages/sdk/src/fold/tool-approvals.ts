import { answerCounts, isNamedApprover } from './approver-rule.js';
import {
  type ApprovalAnswer,
  type ApprovalRequest,
  participantOf,
  runOf,
  type SuppliedResult,
  type ThreadState,
  toolCallOf,
  toolCallsOf,
} from './thread-state.js';
import { isToolUIPart, type ToolUIPart, toolNameOf } from './ui-message.js';

/**
 * Reads of a folded thread's tool calls. Whether a request counts depends on its author being a
 * bot, which a client learns apart from the events (a principal lookup), so `isBot` is asked at
 * read time, never folded in: a kind learned later changes what the same state shows.
 */
export type IsBot = (principalId: string) => boolean;

/**
 * The request that counts for a call: only a bot asks for approvals, and a call that two bots
 * announced (one impersonating the other's call) counts as none, so nobody gets buttons for it.
 */
export function approvalRequestOf(state: ThreadState, toolCallId: string, isBot: IsBot): ApprovalRequest | undefined {
  const fromBots = (toolCallOf(state, toolCallId)?.requests ?? []).filter((request) => isBot(request.by));
  return fromBots.length === 1 ? fromBots[0] : undefined;
}

/** The answer that counts: the first by someone `answerCounts` accepts. Anyone else's is ignored by the bot too. */
export function approvalOf(state: ThreadState, toolCallId: string, isBot: IsBot): ApprovalAnswer | undefined {
  const request = approvalRequestOf(state, toolCallId, isBot);
  return toolCallOf(state, toolCallId)?.answers.find((answer) => answerCounts(request, answer.by));
}

/** A result supplied in the tool's place that counts, by the same rule as answers. */
export function suppliedResultOf(state: ThreadState, toolCallId: string, isBot: IsBot): SuppliedResult | undefined {
  const request = approvalRequestOf(state, toolCallId, isBot);
  return toolCallOf(state, toolCallId)?.results.find((result) => answerCounts(request, result.by));
}

/** The tool part of the request's own run, when that run shows the call. */
export function requestedToolPart(state: ThreadState, request: ApprovalRequest): ToolUIPart | undefined {
  for (const part of runOf(state, request.runId)?.message.parts ?? [])
    if (isToolUIPart(part) && part.toolCallId === request.toolCallId) return part;
  return undefined;
}

/**
 * The request for a call while it still waits: nobody who counts answered or supplied a
 * result, the call has no outcome yet, and the run that asked is still open (a bot that
 * stopped asks no more).
 */
export function waitingRequestOf(state: ThreadState, toolCallId: string, isBot: IsBot): ApprovalRequest | undefined {
  const request = approvalRequestOf(state, toolCallId, isBot);
  if (request === undefined) return undefined;
  if (approvalOf(state, toolCallId, isBot) !== undefined || suppliedResultOf(state, toolCallId, isBot) !== undefined)
    return undefined;
  if (runOf(state, request.runId)?.status !== 'streaming') return undefined;
  return requestedToolPart(state, request)?.state.startsWith('output-') ? undefined : request;
}

export interface WaitingToolCall {
  readonly runId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly approvers: readonly string[];
}

/** Every announced call still waiting, in the order they were asked. */
export function waitingToolCalls(state: ThreadState, isBot: IsBot): WaitingToolCall[] {
  return toolCallsOf(state)
    .map((call) => waitingRequestOf(state, call.toolCallId, isBot))
    .filter((request): request is ApprovalRequest => request !== undefined)
    .sort((a, b) => a.seq - b.seq)
    .map((request) => {
      const part = requestedToolPart(state, request);
      return {
        runId: request.runId,
        toolCallId: request.toolCallId,
        toolName: request.toolName ?? (part ? toolNameOf(part) : 'tool'),
        approvers: request.approvers,
      };
    });
}

/** Requests for sub-agents' calls that a run carries (their calls are shown on subthreads), in the order asked. */
export function subagentRequests(state: ThreadState, runId: string, isBot: IsBot): ApprovalRequest[] {
  return toolCallsOf(state)
    .map((call) => approvalRequestOf(state, call.toolCallId, isBot))
    .filter((request): request is ApprovalRequest => request?.runId === runId && request.toolName !== undefined)
    .sort((a, b) => a.seq - b.seq);
}

/**
 * Whether `principalId` gets Approve and Deny for a call now: it waits, they hold a live grant
 * on the thread (an answer is an event on it), and the bot named them (`isNamedApprover`).
 */
export function mayApprove(state: ThreadState, toolCallId: string, principalId: string, isBot: IsBot): boolean {
  const request = waitingRequestOf(state, toolCallId, isBot);
  return (
    request !== undefined && participantOf(state, principalId) !== undefined && isNamedApprover(request, principalId)
  );
}
