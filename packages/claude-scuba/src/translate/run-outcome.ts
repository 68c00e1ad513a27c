import { classifyEngineError, type ResultLike } from '@bubble/engine';
import type { RunStatus } from '@bubble/protocol';
import type { RunUsage } from './bubble-draft.js';

/** How a run ended, ready for `run_finished`. */
export interface RunOutcome {
  status: RunStatus;
  error?: { code: string; message: string; resetAt?: string; retryable?: boolean };
  usage?: RunUsage;
  interruptedBy?: string;
  interruptReason?: string;
}

export interface InterruptNote {
  by: string;
  reason?: string;
}

export interface OutcomeInput {
  result: ResultLike;
  /** The `error` field of the run's last assistant message ('rate_limit', 'authentication_failed', …). */
  assistantError?: string;
  /** The text of that message ("API Error: 429 …"). */
  assistantErrorText?: string;
  interrupt?: InterruptNote;
  /** From the CLI's last rate_limit_event, when it had one. */
  rateLimitResetsAt?: string;
  /** The query's running total cost before this result, to turn the SDK's cumulative figure into this run's. */
  previousTotalCostUsd: number;
  now: Date;
}

const ABORTED = new Set(['aborted_streaming', 'aborted_tools']);

/**
 * Status, error and usage of a run from its `result` message (engine-notes
 * §2.3): an API error is `success` with `is_error: true`; an interrupt ends
 * `error_during_execution` with an `aborted_*` terminal reason; cost is
 * cumulative per query.
 */
export function outcomeFromResult(input: OutcomeInput): RunOutcome {
  const { result } = input;
  const usage = usageFromResult(result, input.previousTotalCostUsd);
  if (!result.is_error && result.subtype === 'success') return { status: 'completed', usage };
  if (ABORTED.has(result.terminal_reason ?? '') || input.interrupt !== undefined) {
    const outcome: RunOutcome = { status: 'interrupted', usage };
    if (input.interrupt) {
      outcome.interruptedBy = input.interrupt.by;
      if (input.interrupt.reason !== undefined) outcome.interruptReason = input.interrupt.reason;
    }
    return outcome;
  }
  const classified = classifyEngineError({
    result,
    assistantError: input.assistantError,
    text: input.assistantErrorText,
    now: input.now,
  });
  const error: NonNullable<RunOutcome['error']> = {
    code: classified.kind,
    message: classified.message,
    retryable: classified.retryable,
  };
  if (classified.resetAt !== undefined) error.resetAt = classified.resetAt;
  else if (classified.kind === 'rate_limit' && input.rateLimitResetsAt !== undefined) {
    // classifyEngineError does not take the rate_limit_event yet; say the reset time here.
    error.resetAt = input.rateLimitResetsAt;
    error.message = `Claude’s usage limit is reached. It resets at ${input.rateLimitResetsAt}.`;
  }
  return { status: 'error', error, usage };
}

function usageFromResult(result: ResultLike, previousTotal: number): RunUsage {
  const usage: RunUsage = {};
  const raw = (result as { usage?: Record<string, unknown> }).usage;
  const num = (value: unknown): number | undefined =>
    typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  const set = (key: keyof RunUsage, value: number | undefined) => {
    if (value !== undefined) usage[key] = value;
  };
  set('inputTokens', num(raw?.input_tokens));
  set('outputTokens', num(raw?.output_tokens));
  set('cacheReadInputTokens', num(raw?.cache_read_input_tokens));
  set('cacheCreationInputTokens', num(raw?.cache_creation_input_tokens));
  const total = num(result.total_cost_usd);
  if (total !== undefined) {
    // The owner resets the running total when a new CLI process starts; a total below it still means a fresh count.
    set('costUsd', roundUsd(total >= previousTotal ? total - previousTotal : total));
    set('totalCostUsd', total);
  }
  set('durationMs', num(result.duration_ms));
  set('numTurns', num(result.num_turns));
  return usage;
}

function roundUsd(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}
