import {
  LIMITS,
  SubscribeBatchEntrySchema,
  SubscriptionIdSchema,
  type ErrorObject,
  type SubscribeFrame,
} from '@bubble/protocol';

/**
 * Subscriptions of a `subscribe_batch` that cost one frame of the principal's frame budget.
 *
 * A batch of n costs ⌈n/10⌉ frames: cheaper than n `subscribe` frames, so that a bot can open
 * its threads (10,000 at boot cost 1,000 frames, inside the default burst of 2,000, where one
 * frame each would take 40 s of the 200/s rate); but not free, since each subscription still
 * costs the server a grant check and a backlog read. What one socket can open stays bounded
 * however it asks: the per-socket cap (1,000 subscriptions) applies to batches as to
 * single subscribes.
 */
export const BATCH_ENTRIES_PER_FRAME = 10;

/** What a `subscribe_batch` of `count` subscriptions takes from the principal's frame budget. */
export function subscribeBatchCost(count: number): number {
  return Math.max(1, Math.ceil(count / BATCH_ENTRIES_PER_FRAME));
}

/** One entry of a batch: a subscribe to handle, or the error that answers it (by its id when readable). */
export type BatchEntry = { ok: true; frame: SubscribeFrame } | { ok: false; id?: string; error: ErrorObject };

/** A `subscribe_batch` as the server reads it: every entry in order, each parsed on its own. */
export interface IncomingSubscribeBatch {
  type: 'subscribe_batch';
  entries: BatchEntry[];
}

export type ParsedSubscribeBatch = { ok: true; frame: IncomingSubscribeBatch } | { ok: false; error: ErrorObject };

/**
 * Parses a `subscribe_batch` frame (`record` is its JSON object). Pure: never throws.
 *
 * The frame as a whole needs `subscriptions`, an array of 1 to `LIMITS.maxSubscribeBatch`
 * entries; else it is refused with one error (it has no id of its own). Each entry is then held to
 * what a `subscribe` frame's fields are, on its own: a malformed one becomes the error that answers
 * it (naming its `id` when that is readable), and the others stand, so one bad entry does not cost
 * the client its other subscriptions.
 */
export function parseSubscribeBatch(record: Record<string, unknown>): ParsedSubscribeBatch {
  const { subscriptions } = record;
  const limit = LIMITS.maxSubscribeBatch;
  if (!Array.isArray(subscriptions))
    return refuse('invalid subscribe_batch frame: subscriptions must be an array of subscriptions', { limit });
  if (subscriptions.length === 0)
    return refuse(`invalid subscribe_batch frame: subscriptions is empty; send 1 to ${limit}`, { limit, count: 0 });
  if (subscriptions.length > limit) {
    return refuse(
      `invalid subscribe_batch frame: at most ${limit} subscriptions per batch, this one has ${subscriptions.length}; send the rest in another frame`,
      { limit, count: subscriptions.length },
    );
  }
  return { ok: true, frame: { type: 'subscribe_batch', entries: subscriptions.map(parseEntry) } };
}

function parseEntry(value: unknown, index: number): BatchEntry {
  const parsed = SubscribeBatchEntrySchema.safeParse(value);
  if (parsed.success) return { ok: true, frame: { type: 'subscribe', ...parsed.data } };
  const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
  const error: ErrorObject = {
    code: 'invalid_request',
    message: `invalid subscribe_batch entry ${index}: ${summary}`,
    details: { type: 'subscribe_batch', index, issues },
  };
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return SubscriptionIdSchema.safeParse(id).success ? { ok: false, id: id as string, error } : { ok: false, error };
}

function refuse(message: string, details: Record<string, unknown>): ParsedSubscribeBatch {
  return { ok: false, error: { code: 'invalid_request', message, details: { type: 'subscribe_batch', ...details } } };
}
