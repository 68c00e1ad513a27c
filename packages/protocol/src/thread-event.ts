import type { z } from 'zod';
import { assertNever } from './assert-never.js';
import {
  AgentSettingsDataSchema,
  ArtifactUpdatedDataSchema,
  ContextResetDataSchema,
  type CustomEventType,
  type EVENT_DATA_SCHEMAS,
  type EventEnvelope,
  FileAddedDataSchema,
  isCustomEventType,
  isKnownEventType,
  type KnownEventType,
  MessagePartDataSchema,
  ParticipantChangeDataSchema,
  RunFinishedDataSchema,
  RunInterruptRequestedDataSchema,
  RunStartedDataSchema,
  ToolCallApprovalDataSchema,
  ToolCallResultDataSchema,
} from './events.js';

/** The `data` of a known event type, as its schema in `EVENT_DATA_SCHEMAS` reads it. */
export type EventDataOf<T extends KnownEventType> = z.infer<(typeof EVENT_DATA_SCHEMAS)[T]>;

/** What every event carries beside its type and data. */
export type EventHeader = Omit<EventEnvelope, 'type' | 'data'>;

/** One event of a known type, its `data` checked against that type's schema. */
export type ThreadEventOf<T extends KnownEventType> = EventHeader & { readonly type: T; readonly data: EventDataOf<T> };

/** Every event type the protocol defines, told apart by `type`. */
export type KnownThreadEvent = { [T in KnownEventType]: ThreadEventOf<T> }[KnownEventType];

/** An extension's event: the protocol asks only that its data be a JSON object, so nothing more is typed. */
export type CustomThreadEvent = EventHeader & {
  readonly type: CustomEventType;
  readonly data: Readonly<Record<string, unknown>>;
};

/**
 * An event as a client reads it: a known type with typed data, or a custom one. A switch over
 * `event.type` narrows `data`; after the known cases, what is left is a `CustomThreadEvent`.
 */
export type ThreadEvent = KnownThreadEvent | CustomThreadEvent;

export interface EventIssue {
  /** Dotted, from the event: `data.chunk.delta`, `type`. */
  readonly path: string;
  readonly message: string;
}

/** Why an envelope could not be read as a typed event. */
export interface EventParseError {
  /** `unknown_type`: neither a known type nor dotted; `invalid_data`: a known type whose data breaks its schema. */
  readonly code: 'unknown_type' | 'invalid_data';
  readonly type: string;
  readonly seq: number;
  /** The first field at fault (`data.status`, `data.chunk.delta`, `type`). */
  readonly field: string;
  /** One line naming the event and every field at fault. */
  readonly message: string;
  readonly issues: readonly EventIssue[];
}

export type ParseEventResult =
  | { readonly ok: true; readonly event: ThreadEvent }
  | { readonly ok: false; readonly error: EventParseError };

export function isCustomEvent(event: ThreadEvent): event is CustomThreadEvent {
  return isCustomEventType(event.type);
}

/**
 * Reads a stored envelope as a typed event: a known type's `data` is checked by its schema (and
 * comes back as the schema's output, never cast), a dotted type is a custom event, and anything
 * else is an error result naming the field at fault, so a client can skip it and go on instead
 * of failing deep inside its fold.
 */
export function parseEvent(envelope: EventEnvelope): ParseEventResult {
  const { type, data } = envelope;
  if (isKnownEventType(type)) return parseKnown(envelope, type, data);
  if (isCustomEventType(type)) return { ok: true, event: withData(envelope, type, data) };
  const issues = [{ path: 'type', message: 'unknown event type: custom types must contain a dot' }];
  return { ok: false, error: parseError(envelope, 'unknown_type', issues) };
}

/**
 * The envelope with its type and data as read. Spelled out rather than spread: this runs for
 * every event a client reads, and one shape for every event keeps it fast.
 */
function withData<T extends string, D>(envelope: EventEnvelope, type: T, data: D) {
  return {
    id: envelope.id,
    threadId: envelope.threadId,
    seq: envelope.seq,
    type,
    principalId: envelope.principalId,
    data,
    clientEventId: envelope.clientEventId,
    createdAt: envelope.createdAt,
  };
}

function parseKnown(envelope: EventEnvelope, type: KnownEventType, data: unknown): ParseEventResult {
  switch (type) {
    case 'message_part':
      return checked(envelope, type, MessagePartDataSchema.safeParse(data));
    case 'run_started':
      return checked(envelope, type, RunStartedDataSchema.safeParse(data));
    case 'run_finished':
      return checked(envelope, type, RunFinishedDataSchema.safeParse(data));
    case 'run_interrupt_requested':
      return checked(envelope, type, RunInterruptRequestedDataSchema.safeParse(data));
    case 'tool_call_approval':
      return checked(envelope, type, ToolCallApprovalDataSchema.safeParse(data));
    case 'tool_call_result':
      return checked(envelope, type, ToolCallResultDataSchema.safeParse(data));
    case 'participant_added':
    case 'participant_removed':
      return checked(envelope, type, ParticipantChangeDataSchema.safeParse(data));
    case 'artifact_updated':
      return checked(envelope, type, ArtifactUpdatedDataSchema.safeParse(data));
    case 'agent_settings':
      return checked(envelope, type, AgentSettingsDataSchema.safeParse(data));
    case 'context_reset':
      return checked(envelope, type, ContextResetDataSchema.safeParse(data));
    case 'file_added':
      return checked(envelope, type, FileAddedDataSchema.safeParse(data));
    default:
      return assertNever(type, 'event type');
  }
}

type Checked<T extends KnownEventType> =
  | { readonly ok: true; readonly event: ThreadEventOf<T> }
  | { readonly ok: false; readonly error: EventParseError };

function checked<T extends KnownEventType>(
  envelope: EventEnvelope,
  type: T,
  parsed: z.ZodSafeParseResult<EventDataOf<T>>,
): Checked<T> {
  if (parsed.success) return { ok: true, event: withData(envelope, type, parsed.data) };
  const issues = flattenIssues(parsed.error.issues, ['data']);
  return { ok: false, error: parseError(envelope, 'invalid_data', issues) };
}

function parseError(
  event: { type: string; seq: number },
  code: EventParseError['code'],
  issues: EventIssue[],
): EventParseError {
  const described = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return {
    code,
    type: event.type,
    seq: event.seq,
    field: issues[0]?.path ?? 'data',
    message: `event #${event.seq} (${event.type}) is not readable: ${described}`,
    issues,
  };
}

/**
 * Zod reports a chunk that fits no variant as one `invalid_union` holding every variant's
 * complaints; the useful one is the variant whose discriminator matched (its complaints do not
 * mention `type`). When none matched, the discriminator itself is the field at fault.
 */
function flattenIssues(issues: readonly z.core.$ZodIssue[], prefix: ReadonlyArray<PropertyKey>): EventIssue[] {
  const out: EventIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const matched = issue.errors.find((branch) => !branch.some((inner) => isDiscriminator(inner)));
      if (matched !== undefined) out.push(...flattenIssues(matched, path));
      else out.push({ path: [...path, 'type'].map(String).join('.'), message: 'no known variant has this type' });
      continue;
    }
    out.push({ path: path.map(String).join('.'), message: issue.message });
  }
  return out;
}

function isDiscriminator(issue: z.core.$ZodIssue): boolean {
  return issue.path.length === 1 && issue.path[0] === 'type';
}
