import type { ApprovalRequest } from './thread-state.js';

/**
 * Who may answer a parked tool call, the one rule every client follows (protocol.md, "Tool
 * approvals"): the principals the bot named in its request, nobody else, never guessed. The bot's
 * own answer counts as well (its automatic denial, on a timeout or a stop), but only the named
 * approvers are offered Approve and Deny. Without a request, a call was not parked for anyone,
 * so any answer stands as recorded.
 */
export function answerCounts(request: ApprovalRequest | undefined, principalId: string): boolean {
  return request === undefined || principalId === request.by || isNamedApprover(request, principalId);
}

/** Whether the bot's request names `principalId` among the approvers. */
export function isNamedApprover(request: ApprovalRequest, principalId: string): boolean {
  return request.approvers.includes(principalId);
}
