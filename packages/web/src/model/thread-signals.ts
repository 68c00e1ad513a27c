import type { RunUsage } from '@bubble/protocol';
import { type IsBot, mayApprove, type RunState, runsOf, type ThreadState, waitingToolCalls } from '@bubble/sdk/client';

/**
 * What the thread list and the tab title tell about a thread, read from its fold: messages
 * unread (not events: a run of someone else's whose text began after the cursor), and tool
 * calls waiting for *your* answer (the fold's `waitingToolCalls` and `mayApprove`).
 */
export interface ThreadSignals {
  readonly unread: number;
  /** The window read does not reach the cursor: at least `unread`. */
  readonly unreadAtLeast: boolean;
  readonly approvalsForMe: number;
}

/**
 * A message is unread when someone else wrote it and its text began after the cursor. A run
 * whose text you saw start and that went on streaming after you left is not counted again;
 * runs without text (a bare tool call, an approval request) are not messages: an approval
 * request is its own signal.
 */
export function isUnreadMessage(run: RunState, cursor: number, me: string): boolean {
  if (run.principalId === me || run.principalId === 'system') return false;
  return run.message.parts.some((part, index) => {
    if (part.type !== 'text' || part.text.trim() === '') return false;
    const seqs = run.partSeqs[index];
    return (seqs?.text ?? seqs?.added ?? run.firstSeq) > cursor;
  });
}

export function unreadMessages(state: ThreadState, cursor: number, me: string): RunState[] {
  return runsOf(state).filter((run) => isUnreadMessage(run, cursor, me));
}

/** Tool calls still waiting that `me` may answer now. */
export function approvalsFor(state: ThreadState, me: string, isBot: IsBot) {
  return waitingToolCalls(state, isBot).filter((call) => mayApprove(state, call.toolCallId, me, isBot));
}

export function threadSignals(
  state: ThreadState,
  input: { cursor: number; me: string; isBot: IsBot; windowStart: number },
): ThreadSignals {
  return {
    unread: unreadMessages(state, input.cursor, input.me).length,
    unreadAtLeast: input.windowStart > input.cursor + 1,
    approvalsForMe: approvalsFor(state, input.me, input.isBot).length,
  };
}

/** The tab's title: approvals waiting for you first, then unread messages. */
export function tabTitle(totals: { approvals: number; unread: number }, base = 'Bubble'): string {
  if (totals.approvals > 0)
    return `(${totals.approvals}) ${totals.approvals === 1 ? 'Approval' : 'Approvals'} waiting · ${base}`;
  if (totals.unread > 0) return `(${totals.unread}) ${base}`;
  return base;
}

/** A run's usage and cost, and a thread's total, as one short line each. */
export interface UsageSummary {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number | undefined;
  readonly runs: number;
}

export function usageOf(runs: readonly RunState[]): UsageSummary | undefined {
  let inputTokens = 0;
  let outputTokens = 0;
  let costUsd: number | undefined;
  let counted = 0;
  for (const run of runs) {
    const usage: RunUsage | undefined = run.usage;
    if (usage === undefined) continue;
    counted += 1;
    inputTokens += (usage.inputTokens ?? 0) + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
    outputTokens += usage.outputTokens ?? 0;
    if (usage.costUsd !== undefined) costUsd = (costUsd ?? 0) + usage.costUsd;
  }
  return counted === 0 ? undefined : { inputTokens, outputTokens, costUsd, runs: counted };
}

export function formatTokens(n: number): string {
  if (n < 1_000) return String(n);
  if (n < 10_000) return `${(n / 1_000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1_000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatCost(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.01) return '<$0.01';
  return `$${usd < 10 ? usd.toFixed(2) : usd.toFixed(0)}`;
}

/** "1.2k in · 340 out · $0.02": what a run (or a thread, summed) used. */
export function usageLine(summary: UsageSummary): string {
  const parts = [`${formatTokens(summary.inputTokens)} in`, `${formatTokens(summary.outputTokens)} out`];
  if (summary.costUsd !== undefined) parts.push(formatCost(summary.costUsd));
  return parts.join(' · ');
}
