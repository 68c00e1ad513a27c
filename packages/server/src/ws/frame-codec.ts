import {
  CLIENT_FRAME_TYPES,
  ClientFrameSchema,
  type ClientFrame,
  type ErrorCode,
  type ErrorObject,
  type ServerFrame,
} from '@bubble/protocol';
import { describeJsonProblem, jsonProblem, MAX_JSON_DEPTH } from '../domain/text-rules.js';
import { parseSubscribeBatch, type IncomingSubscribeBatch } from './subscribe-batch.js';

/** A client frame as the server reads it: a `subscribe_batch` comes with each entry parsed on its own. */
export type IncomingFrame = Exclude<ClientFrame, { type: 'subscribe_batch' }> | IncomingSubscribeBatch;

export type ParsedClientFrame = { ok: true; frame: IncomingFrame } | { ok: false; id?: string; error: ErrorObject };

const KNOWN_TYPES: ReadonlySet<string> = new Set(CLIENT_FRAME_TYPES);

/**
 * Parses one text frame from a client. Pure: never throws, whatever the input.
 * A failure carries the frame's `id` when one can be read from it, so the
 * client can tell which of its requests was refused.
 */
export function parseClientFrame(text: string): ParsedClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail(undefined, 'frame is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(undefined, 'a frame must be a JSON object');
  }
  const record = value as Record<string, unknown>;
  const found = jsonProblem(record, MAX_JSON_DEPTH);
  const id =
    typeof record.id === 'string' &&
    record.id.length > 0 &&
    record.id.length <= 200 &&
    (found === null || found.path[0] !== 'id')
      ? record.id
      : undefined;
  if (found !== null) {
    // The Text rule holds for frames as for bodies: nothing they carry reaches the store otherwise.
    const { message, details } = describeJsonProblem(found, 'frame');
    return fail(id, message, details);
  }
  const type = record.type;
  if (typeof type !== 'string' || !KNOWN_TYPES.has(type)) {
    const shown = typeof type === 'string' ? quoteBounded(type) : JSON.stringify(type ?? null).slice(0, MAX_ECHO + 2);
    return fail(id, `unknown frame type ${shown}; expected one of ${CLIENT_FRAME_TYPES.join(', ')}`, {
      type: typeof type === 'string' ? type.slice(0, MAX_ECHO) : null,
    });
  }
  if (type === 'subscribe_batch') return parseSubscribeBatch(record);
  const parsed = ClientFrameSchema.safeParse(record);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
    const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
    return fail(id, `invalid ${type} frame: ${summary}`, { type, issues });
  }
  // A subscribe_batch was read above, entry by entry.
  return { ok: true, frame: parsed.data as Exclude<ClientFrame, { type: 'subscribe_batch' }> };
}

/** At most this much of a client's input is quoted back in an error (a 1 MiB type must not come back twice over). */
const MAX_ECHO = 64;

/** A string as JSON, cut to MAX_ECHO characters with its full length named. */
function quoteBounded(text: string): string {
  return text.length <= MAX_ECHO
    ? JSON.stringify(text)
    : `${JSON.stringify(text.slice(0, MAX_ECHO)).slice(0, -1)}…" (${text.length} characters)`;
}

function fail(id: string | undefined, message: string, details: Record<string, unknown> = {}): ParsedClientFrame {
  return id === undefined
    ? { ok: false, error: { code: 'invalid_request', message, details } }
    : { ok: false, id, error: { code: 'invalid_request', message, details } };
}

/** One server frame as the text sent on the wire. */
export function serializeFrame(frame: ServerFrame): string {
  return JSON.stringify(frame);
}

export function errorFrame(
  code: ErrorCode,
  message: string,
  id?: string,
  details: Record<string, unknown> = {},
): string {
  return serializeFrame(
    id === undefined
      ? { type: 'error', error: { code, message, details } }
      : { type: 'error', id, error: { code, message, details } },
  );
}

/**
 * The text before an event's JSON in an `event` frame of subscription `id`.
 * Fan-out serializes each event once and builds every subscriber's frame as
 * `prefix + eventJson + '}'`, which is the same text `serializeFrame` gives.
 */
export function eventFramePrefix(id: string): string {
  return `{"type":"event","id":${JSON.stringify(id)},"event":`;
}

export const EVENT_FRAME_SUFFIX = '}';
