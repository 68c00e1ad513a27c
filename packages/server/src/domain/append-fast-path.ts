import type { NewEvent } from '@bubble/protocol';

/**
 * Fast paths for the most common append: one `message_part` event whose chunk
 * is a `text-delta`. Each function answers only for inputs that the zod schemas
 * of `@bubble/protocol` provably accept with the same output, and returns
 * null/false for everything else, so the caller falls back to the schemas
 * (which also produce the error messages). `append-fast-path.test.ts` checks
 * both against the schemas on a table of inputs.
 */

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isIdString = (value: unknown): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= 200;

/**
 * The body of a single-event append, as `AppendRequestSchema` would parse it
 * (unknown keys dropped), when it is an object without `events`, with an id-like
 * `type`, an object `data` and an absent, null or id-like `clientEventId`; else null.
 */
export function fastSingleEvent(body: unknown): NewEvent | null {
  if (!isObject(body) || body.events !== undefined) return null;
  const { type, data, clientEventId } = body;
  if (!isIdString(type) || !isObject(data)) return null;
  if (clientEventId === undefined || clientEventId === null) return { type, data };
  return isIdString(clientEventId) ? { type, data, clientEventId } : null;
}

/**
 * Whether `validateEventData(type, data)` accepts the event because it is a
 * `message_part` carrying a plain `text-delta` chunk (no `providerMetadata`);
 * false means "not decided here", not "invalid".
 */
export function isPlainTextDelta(type: string, data: unknown): boolean {
  if (type !== 'message_part' || !isObject(data) || !isIdString(data.runId)) return false;
  const chunk = data.chunk;
  return (
    isObject(chunk) &&
    chunk.type === 'text-delta' &&
    typeof chunk.id === 'string' &&
    chunk.id.length >= 1 &&
    typeof chunk.delta === 'string' &&
    chunk.providerMetadata === undefined
  );
}
