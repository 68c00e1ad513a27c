import { z } from 'zod';
import { LIMITS, type EventEnvelope } from '@bubble/protocol';

/**
 * Where a bot starts reading a thread (seed 000, "Reconnect, not restart"). Pure: the caller
 * reads events and calls again when the function asks for more.
 *
 * - No checkpoint: `onFirstJoin`. `since_joined` (default) replays the newest `maxReplay` raw
 *   events at or after the bot's `participant_added` (seq `joinedSeq`); `skip_to_head` reads
 *   only what comes next.
 * - A checkpoint (the last seq the handler settled): `onResume`. `catch_up` (default) replays the
 *   newest `maxReplay` raw events after the checkpoint; `skip_to_head` reads only what comes next.
 * - A replay window is expanded backward so that a run is never split: a run that has events in
 *   the window starts with its `run_started`, and a run still open at the window's start is
 *   included whole. `catch_up` never expands below the checkpoint (settled events are never
 *   delivered again); `since_joined` may expand below the join, so a message a human was typing
 *   when the bot was invited arrives whole. Expansion is bounded by `maxExpansion` raw events;
 *   a run longer than that is split (the drain then treats its tail as a bare-delta turn).
 * - A run whose `run_started` is not among the events read is either a bare-delta turn or
 *   started earlier: the function asks for earlier events until it knows or reaches the bound.
 */

export const BacklogPolicySchema = z.object({
  onFirstJoin: z.enum(['since_joined', 'skip_to_head']).default('since_joined'),
  onResume: z.enum(['catch_up', 'skip_to_head']).default('catch_up'),
  maxReplay: z.number().int().nonnegative().default(50),
  maxExpansion: z.number().int().nonnegative().default(1000),
});
export type BacklogPolicy = z.infer<typeof BacklogPolicySchema>;
export type BacklogPolicyInput = z.input<typeof BacklogPolicySchema>;

export const DEFAULT_BACKLOG_POLICY: Readonly<BacklogPolicy> = Object.freeze(BacklogPolicySchema.parse({}));

export interface ReplayWindowInput {
  /** The last seq the handler settled, or null when the store has none. */
  readonly checkpoint: number | null;
  /** The seq of the bot's own `participant_added` on this thread. */
  readonly joinedSeq: number;
  /** The thread's head seq when the decision is made. */
  readonly headSeq: number;
  readonly policy: BacklogPolicy;
  /** Events already read: contiguous, ascending, ending at or above `headSeq`. Empty at first. */
  readonly events?: readonly EventEnvelope[];
}

export type ReplayRule = 'since_joined' | 'catch_up' | 'skip_to_head';

export type ReplayWindowDecision =
  | {
      readonly kind: 'start';
      /** Deliver events with `seq > afterSeq`. */
      readonly afterSeq: number;
      readonly rule: ReplayRule;
      /** How many events the window grew backward to keep runs whole. */
      readonly expandedBy: number;
    }
  | {
      readonly kind: 'need_events';
      /** Read `GET …/events?before=<beforeSeq>&limit=<limit>` and call again with those events prepended. */
      readonly beforeSeq: number;
      readonly limit: number;
    };

interface RunSpan {
  minSeq: number;
  maxSeq: number;
  startedSeq: number | null;
  finishedSeq: number | null;
}

const RUN_EVENT_TYPES: ReadonlySet<string> = new Set(['run_started', 'message_part', 'run_finished']);
/** Extra events read beyond the window on the first read, so most runs' starts are already in hand. */
const LOOKBACK_MARGIN = 100;

function runSpans(events: readonly EventEnvelope[]): RunSpan[] {
  const spans = new Map<string, RunSpan>();
  for (const event of events) {
    if (!RUN_EVENT_TYPES.has(event.type)) continue;
    const runId = event.data.runId;
    if (typeof runId !== 'string' || runId === '') continue;
    const key = `${event.principalId}\u0000${runId}`;
    let span = spans.get(key);
    if (!span) {
      span = { minSeq: event.seq, maxSeq: event.seq, startedSeq: null, finishedSeq: null };
      spans.set(key, span);
    }
    span.minSeq = Math.min(span.minSeq, event.seq);
    span.maxSeq = Math.max(span.maxSeq, event.seq);
    if (event.type === 'run_started' && span.startedSeq === null) span.startedSeq = event.seq;
    if (event.type === 'run_finished' && span.finishedSeq === null) span.finishedSeq = event.seq;
  }
  return [...spans.values()];
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

/** Picks the seq to read after, or asks for earlier events first. */
export function selectReplayWindow(input: ReplayWindowInput): ReplayWindowDecision {
  const { policy } = input;
  const headSeq = Math.max(0, input.headSeq);
  // A checkpoint above the head comes from a log that is gone (a new data dir): nothing here was
  // settled, so it counts as no checkpoint at all.
  const checkpoint = input.checkpoint !== null && input.checkpoint <= headSeq ? Math.max(0, input.checkpoint) : null;
  const rule: ReplayRule = checkpoint === null ? policy.onFirstJoin : policy.onResume;
  if (rule === 'skip_to_head') return { kind: 'start', afterSeq: headSeq, rule, expandedBy: 0 };

  const floor = rule === 'catch_up' ? (checkpoint ?? 0) : clamp(input.joinedSeq - 1, 0, headSeq);
  const candidate = Math.max(floor, headSeq - policy.maxReplay);
  const lowest =
    rule === 'catch_up'
      ? Math.max(floor, candidate - policy.maxExpansion)
      : Math.max(0, candidate - policy.maxExpansion);
  if (candidate <= lowest) return { kind: 'start', afterSeq: candidate, rule, expandedBy: 0 };

  const events = input.events ?? [];
  const lo = events.length > 0 ? (events[0] as EventEnvelope).seq : headSeq + 1;
  const seenToFloor = lo <= lowest + 1;
  // First read: the window itself plus a margin, so runs started just before it are in hand.
  if (lo > candidate) {
    return {
      kind: 'need_events',
      beforeSeq: lo,
      limit: Math.min(LIMITS.maxPageLimit, lo - 1 - lowest, lo - 1 - candidate + LOOKBACK_MARGIN),
    };
  }

  const spans = runSpans(events);
  let start = candidate;
  for (let changed = true; changed; ) {
    changed = false;
    for (const span of spans) {
      let runStart: number | null = null;
      if (span.startedSeq !== null) {
        const openAtStart = span.startedSeq <= start && (span.finishedSeq === null || span.finishedSeq > start);
        if (openAtStart) runStart = span.startedSeq;
      } else if (span.maxSeq > start) {
        // Delivered, with no run_started in hand: a bare-delta turn, or a run that began before `lo`.
        if (!seenToFloor) {
          return { kind: 'need_events', beforeSeq: lo, limit: Math.min(LIMITS.maxPageLimit, lo - 1 - lowest) };
        }
        if (span.minSeq <= start) runStart = span.minSeq;
      }
      if (runStart !== null && runStart - 1 < start) {
        const next = Math.max(lowest, runStart - 1);
        if (next < start) {
          start = next;
          changed = true;
        }
      }
    }
  }
  return { kind: 'start', afterSeq: start, rule, expandedBy: candidate - start };
}
