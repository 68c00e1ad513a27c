import type { ApprovalRequestView, ApprovalView } from '../model/thread-model';
import type { PrincipalLabel } from '../model/who-is-who';

/** What a message and its tool calls may do and ask of the thread view (one object per thread). */
export interface RunActions {
  /** Whether the signed-in person gets Approve and Deny for this call: the fold's `mayApprove`, never guessed. */
  canApprove(toolCallId: string): boolean;
  /** Whether the signed-in person may append here (own grant): Stop needs it. */
  canWrite: boolean;
  approval(toolCallId: string): ApprovalView | undefined;
  /** The bot's request for this call while it still waits for an answer. */
  waitingRequest(toolCallId: string): ApprovalRequestView | undefined;
  /** Requests for calls of the run's sub-agents (the calls themselves are on subthreads). */
  subagentRequests(runId: string): ApprovalRequestView[];
  answer(toolCallId: string, decision: 'allow' | 'deny', reason?: string): Promise<void>;
  stop(runId: string): Promise<void>;
  /** A name as one line of text: with the id when another participant shares the name. */
  nameOf(principalId: string): string;
  /** The same, with whether it is a bot, for headers that show a badge. */
  labelOf(principalId: string): PrincipalLabel;
  /** The thread shown, where this run's calls run. */
  threadId: string;
  /** A thread's title as the signed-in person may read it, or null (untitled, or not theirs to see). */
  threadTitle(threadId: string): Promise<string | null>;
}
