import type { RunFinishedData, RunStartedData, UiChunk } from '@bubble/protocol';

/**
 * An event the bot is about to append, before the server gives it a seq.
 * `clientEventId` is derived from the run id and a counter, so a retried
 * append is recognised by the server instead of landing twice.
 */
export type BubbleEventDraft =
  | { type: 'run_started'; data: RunStartedData; clientEventId: string }
  | { type: 'message_part'; data: { runId: string; chunk: UiChunk }; clientEventId: string }
  | { type: 'run_finished'; data: RunFinishedData & RunFinishedExtras; clientEventId: string };

/** Fields claude-scuba adds to `run_finished` (the schema is loose, so they pass through). */
export interface RunFinishedExtras {
  /** Who appended the `run_interrupt_requested` this run stopped for. */
  interruptedBy?: string;
  /** The reason they gave, if any. */
  interruptReason?: string;
  /**
   * Messages sent while the run was under way that its turn took in as well
   * (steered into a tool step): the run answered them too, beside its
   * `run_started.replyTo`. The thread is the record of what the bot answered.
   */
  replyTo?: number[];
}

export type MessagePartDraft = Extract<BubbleEventDraft, { type: 'message_part' }>;

/** Usage and cost of one run, as carried on `run_finished.usage`. */
export interface RunUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  /** This run's cost (the SDK reports a running total per query; this is the difference). */
  costUsd?: number;
  /** The query's running total, as the SDK reported it. */
  totalCostUsd?: number;
  durationMs?: number;
  numTurns?: number;
  [key: string]: unknown;
}

export function isDeltaDraft(draft: BubbleEventDraft): draft is MessagePartDraft & {
  data: { chunk: { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string } };
} {
  return (
    draft.type === 'message_part' &&
    (draft.data.chunk.type === 'text-delta' || draft.data.chunk.type === 'reasoning-delta')
  );
}
