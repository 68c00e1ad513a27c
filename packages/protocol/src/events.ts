import { z } from 'zod';
import { UiChunkSchema } from './chunks.js';
import {
  ArtifactNameSchema,
  PrincipalIdSchema,
  QueryIntSchema,
  SeqSchema,
  ThreadIdSchema,
  TimestampSchema,
} from './ids.js';
import { RoleSchema } from './thread.js';

export const RunIdSchema = z.string().min(1).max(200);
export const ToolCallIdSchema = z.string().min(1).max(200);
export const ClientEventIdSchema = z.string().min(1).max(200);
export const EventTypeSchema = z.string().min(1).max(200);
/** A custom event type: any name with a dot in it, e.g. `acme.poll_created` (the protocol asks nothing more of it). */
export type CustomEventType = `${string}.${string}`;
export function isCustomEventType(type: string): type is CustomEventType {
  return type.includes('.');
}

const JsonObjectSchema = z.record(z.string(), z.unknown());

export const MessagePartDataSchema = z.looseObject({ runId: RunIdSchema, chunk: UiChunkSchema });
/**
 * The permission modes a participant may ask a bot for: never one that skips approvals
 * (`bypassPermissions`, `dontAsk`).
 */
export const AgentPermissionModeSchema = z.enum(['default', 'acceptEdits', 'plan']);
export type AgentPermissionMode = z.infer<typeof AgentPermissionModeSchema>;
/** A model name as the engine takes it (`claude-sonnet-4-5`, `opus`). */
export const AgentModelSchema = z.string().min(1).max(200);
/** What a bot's runs use on one thread: carried by `agent_settings` and by `run_started` as `settings`. */
export const AgentSettingsValuesSchema = z.looseObject({
  model: AgentModelSchema.optional(),
  permissionMode: AgentPermissionModeSchema.optional(),
  effort: z.enum(['low', 'medium', 'high', 'max']).optional(),
  budgetUsd: z.number().nonnegative().finite().optional(),
});
export type AgentSettingsValues = z.infer<typeof AgentSettingsValuesSchema>;
export const RunStartedDataSchema = z.looseObject({
  runId: RunIdSchema,
  replyTo: z.array(SeqSchema).optional(),
  settings: AgentSettingsValuesSchema.optional(),
});
export const RunStatusSchema = z.enum(['completed', 'interrupted', 'error']);
export type RunStatus = z.infer<typeof RunStatusSchema>;
/** A run's usage as protocol.md lists it; other counters a bot adds (`totalCostUsd`, …) pass through. */
export const RunUsageSchema = z.looseObject({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  cacheReadInputTokens: z.number().optional(),
  cacheCreationInputTokens: z.number().optional(),
  costUsd: z.number().optional(),
});
export type RunUsage = z.infer<typeof RunUsageSchema>;
export const RunErrorSchema = z.looseObject({ code: z.string(), message: z.string(), resetAt: z.string().optional() });
export type RunError = z.infer<typeof RunErrorSchema>;
export const RunFinishedDataSchema = z.looseObject({
  runId: RunIdSchema,
  status: RunStatusSchema,
  error: RunErrorSchema.optional(),
  /** The principal whose `run_interrupt_requested` ended the run. */
  interruptedBy: z.string().optional(),
  interruptReason: z.string().optional(),
  usage: RunUsageSchema.optional(),
});
export const RunInterruptRequestedDataSchema = z.looseObject({ runId: RunIdSchema, reason: z.string().optional() });
export const ToolCallApprovalDataSchema = z.looseObject({
  toolCallId: ToolCallIdSchema,
  decision: z.enum(['allow', 'deny']),
  reason: z.string().optional(),
  updatedInput: JsonObjectSchema.optional(),
});
export const ToolCallResultDataSchema = z.looseObject({
  toolCallId: ToolCallIdSchema,
  output: z.unknown(),
  isError: z.boolean().optional(),
});
export const ParticipantChangeDataSchema = z.looseObject({
  principalId: z.string(),
  role: RoleSchema,
  by: z.string(),
});
export const ArtifactUpdatedDataSchema = z.looseObject({
  name: ArtifactNameSchema,
  version: z.number().int().positive(),
  mediaType: z.string(),
  by: z.string(),
});

/**
 * A participant asks the bot `target` to use these from now on, on this thread. `requestedBy` is
 * only for the bot itself recording a person's chat command (the server checks the author).
 */
export const AgentSettingsDataSchema = z.looseObject({
  ...AgentSettingsValuesSchema.shape,
  target: PrincipalIdSchema,
  requestedBy: PrincipalIdSchema.optional(),
});
/** The bot `target` starts a fresh conversation with the next message. */
export const ContextResetDataSchema = z.looseObject({
  target: PrincipalIdSchema,
  requestedBy: PrincipalIdSchema.optional(),
});
/** Written by `system` when a file is uploaded; `by` is the uploader. */
export const FileAddedDataSchema = z.looseObject({
  fileId: z.string().min(1).max(200),
  name: z.string().min(1).max(255),
  mediaType: z.string().min(1).max(255),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'),
  by: z.string(),
});

/** The `data` schema of every event type the server knows. */
export const EVENT_DATA_SCHEMAS = {
  message_part: MessagePartDataSchema,
  run_started: RunStartedDataSchema,
  run_finished: RunFinishedDataSchema,
  run_interrupt_requested: RunInterruptRequestedDataSchema,
  tool_call_approval: ToolCallApprovalDataSchema,
  tool_call_result: ToolCallResultDataSchema,
  participant_added: ParticipantChangeDataSchema,
  participant_removed: ParticipantChangeDataSchema,
  artifact_updated: ArtifactUpdatedDataSchema,
  agent_settings: AgentSettingsDataSchema,
  context_reset: ContextResetDataSchema,
  file_added: FileAddedDataSchema,
} as const;
export type KnownEventType = keyof typeof EVENT_DATA_SCHEMAS;
export const KNOWN_EVENT_TYPES = Object.keys(EVENT_DATA_SCHEMAS) as KnownEventType[];
/** Types only the server itself (principal `system`) may write. */
export const SYSTEM_EVENT_TYPES: ReadonlySet<string> = new Set([
  'participant_added',
  'participant_removed',
  'artifact_updated',
  'file_added',
]);
/**
 * Types whose `requestedBy` names the person a bot acts for: accepted only when the event's author
 * is the bot `target` itself.
 */
export const REQUESTED_BY_EVENT_TYPES: ReadonlySet<string> = new Set(['agent_settings', 'context_reset']);

export type MessagePartData = z.infer<typeof MessagePartDataSchema>;
export type RunStartedData = z.infer<typeof RunStartedDataSchema>;
export type RunFinishedData = z.infer<typeof RunFinishedDataSchema>;
export type RunInterruptRequestedData = z.infer<typeof RunInterruptRequestedDataSchema>;
export type ToolCallApprovalData = z.infer<typeof ToolCallApprovalDataSchema>;
export type ToolCallResultData = z.infer<typeof ToolCallResultDataSchema>;
export type ParticipantChangeData = z.infer<typeof ParticipantChangeDataSchema>;
export type ArtifactUpdatedData = z.infer<typeof ArtifactUpdatedDataSchema>;
export type AgentSettingsData = z.infer<typeof AgentSettingsDataSchema>;
export type ContextResetData = z.infer<typeof ContextResetDataSchema>;
export type FileAddedData = z.infer<typeof FileAddedDataSchema>;

export function isKnownEventType(type: string): type is KnownEventType {
  return Object.hasOwn(EVENT_DATA_SCHEMAS, type);
}

export type EventDataValidation =
  | { ok: true; data: Record<string, unknown> }
  | { ok: false; message: string; issues: Array<{ path: string; message: string }> };

/**
 * Checks an event's `data` against its type: the known types by their schema, a dotted custom
 * type only for being a JSON object, any other type is refused.
 */
export function validateEventData(type: string, data: unknown): EventDataValidation {
  if (isKnownEventType(type)) {
    const parsed = EVENT_DATA_SCHEMAS[type].safeParse(data);
    if (parsed.success) return { ok: true, data: parsed.data as Record<string, unknown> };
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
    return { ok: false, message: `invalid data for ${type}: ${describeIssues(issues)}`, issues };
  }
  if (!isCustomEventType(type)) {
    return {
      ok: false,
      message: `unknown event type "${type}": custom types must contain a dot (e.g. "acme.poll_created")`,
      issues: [{ path: 'type', message: 'unknown event type' }],
    };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return {
      ok: false,
      message: `data of custom event type "${type}" must be a JSON object`,
      issues: [{ path: 'data', message: 'expected an object' }],
    };
  }
  return { ok: true, data: data as Record<string, unknown> };
}

function describeIssues(issues: Array<{ path: string; message: string }>): string {
  return issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
}

/** One stored event, as every reader sees it. */
export const EventEnvelopeSchema = z.object({
  id: z.string(),
  threadId: ThreadIdSchema,
  seq: SeqSchema,
  type: EventTypeSchema,
  principalId: z.string(),
  data: JsonObjectSchema,
  clientEventId: ClientEventIdSchema.nullable().optional(),
  createdAt: TimestampSchema,
});
export type EventEnvelope = z.infer<typeof EventEnvelopeSchema>;

/**
 * One event to append. Its `data` is checked separately by `validateEventData`. A `clientEventId`
 * of null is read as absent, so a client may send back the shape of a stored envelope.
 */
export const NewEventSchema = z
  .object({
    type: EventTypeSchema,
    data: z.unknown(),
    clientEventId: ClientEventIdSchema.nullish(),
  })
  .transform(
    ({ type, data, clientEventId }): NewEvent =>
      clientEventId == null ? { type, data } : { type, data, clientEventId },
  );
export interface NewEvent {
  type: string;
  data: unknown;
  clientEventId?: string;
}

export const AppendBatchSchema = z.object({
  events: z
    .array(NewEventSchema)
    .min(1, 'a batch needs at least one event')
    .max(500, 'a batch holds at most 500 events'),
});
export type AppendRequest = NewEvent | { events: NewEvent[] };

/**
 * The body of `POST /v1/threads/:id/events`: one event `{type, data, clientEventId?}`, or a batch
 * `{events: [...]}`, told apart by the `events` key so that each gets its own error messages. A body
 * with both `events` and `type` or `data` is refused rather than half read.
 */
export const AppendRequestSchema = z.unknown().transform((body, ctx): AppendRequest => {
  const isBatch = typeof body === 'object' && body !== null && !Array.isArray(body) && 'events' in body;
  if (isBatch && ('type' in body || 'data' in body)) {
    ctx.addIssue({
      code: 'custom',
      message: 'send one event ({type, data}) or a batch ({events: [...]}), not both',
      path: [],
    });
    return z.NEVER;
  }
  const parsed = (isBatch ? AppendBatchSchema : NewEventSchema).safeParse(body);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});

/** Normalizes an append body to its list of events. */
export function appendRequestEvents(request: AppendRequest): NewEvent[] {
  return 'events' in request ? request.events : [request];
}

export const AppendResponseSchema = z.object({ events: z.array(EventEnvelopeSchema) });

export const ReadEventsQuerySchema = z
  .object({
    after: QueryIntSchema.optional(),
    before: QueryIntSchema.optional(),
    limit: QueryIntSchema.pipe(z.number().min(1).max(1000)).default(100),
  })
  .refine((query) => query.after === undefined || query.before === undefined, {
    message: 'use either after or before, not both',
  });
export type ReadEventsQuery = z.infer<typeof ReadEventsQuerySchema>;

export const ReadEventsResponseSchema = z.object({ events: z.array(EventEnvelopeSchema), headSeq: SeqSchema });
