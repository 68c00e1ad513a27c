/**
 * Structural types for the SDK messages Bubble consumes (seed 004: depend on a
 * few stable shapes, not on the SDK's full unions). Each shape is a loose zod
 * schema (extra fields pass through) so a drifted message becomes `unknown`
 * with a debug log instead of a crash.
 */
import type { SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';

const uuids = { user_message_uuid: z.string().optional(), user_message_uuids: z.array(z.string()).optional() };
const ptu = z.string().nullable().optional();

export const contentBlockLikeSchema = z.looseObject({ type: z.string() });
export type ContentBlockLike = z.infer<typeof contentBlockLikeSchema> & {
  text?: string;
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
};

export const systemInitSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('init'),
  session_id: z.string(),
  model: z.string(),
  cwd: z.string(),
  tools: z.array(z.string()),
  permissionMode: z.string(),
  mcp_servers: z.array(z.looseObject({ name: z.string(), status: z.string() })).optional(),
  agents: z.array(z.string()).optional(),
  claude_code_version: z.string().optional(),
});
export type SystemInitLike = z.infer<typeof systemInitSchema>;

export const systemStatusSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('status'),
  status: z.string().nullable(),
  session_id: z.string(),
  ...uuids,
});
export type SystemStatusLike = z.infer<typeof systemStatusSchema>;

export const apiRetrySchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('api_retry'),
  attempt: z.number(),
  max_retries: z.number(),
  retry_delay_ms: z.number(),
  error_status: z.number().nullable(),
  error: z.unknown().optional(),
  session_id: z.string(),
});
export type ApiRetryLike = z.infer<typeof apiRetrySchema>;

export const permissionDeniedSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('permission_denied'),
  tool_name: z.string(),
  tool_use_id: z.string(),
  message: z.string(),
  session_id: z.string(),
});
export type PermissionDeniedLike = z.infer<typeof permissionDeniedSchema>;

const taskBase = {
  type: z.literal('system'),
  task_id: z.string(),
  session_id: z.string(),
  tool_use_id: z.string().optional(),
};
export const taskStartedSchema = z.looseObject({
  ...taskBase,
  subtype: z.literal('task_started'),
  description: z.string().optional(),
  task_type: z.string().optional(),
  is_backgrounded: z.boolean().optional(),
  prompt: z.string().optional(),
});
export const taskProgressSchema = z.looseObject({
  ...taskBase,
  subtype: z.literal('task_progress'),
  description: z.string().optional(),
  last_tool_name: z.string().optional(),
});
export const taskUpdatedSchema = z.looseObject({
  ...taskBase,
  subtype: z.literal('task_updated'),
  patch: z.looseObject({ status: z.string().optional() }),
});
export const taskNotificationSchema = z.looseObject({
  ...taskBase,
  subtype: z.literal('task_notification'),
  status: z.string(),
  output_file: z.string().optional(),
  summary: z.string().optional(),
});
export const backgroundTasksChangedSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('background_tasks_changed'),
  tasks: z.array(z.unknown()),
  session_id: z.string(),
});
export type TaskStartedLike = z.infer<typeof taskStartedSchema>;
export type TaskProgressLike = z.infer<typeof taskProgressSchema>;
export type TaskUpdatedLike = z.infer<typeof taskUpdatedSchema>;
export type TaskNotificationLike = z.infer<typeof taskNotificationSchema>;
export type BackgroundTasksChangedLike = z.infer<typeof backgroundTasksChangedSchema>;

export const streamEventSchema = z.looseObject({
  type: z.literal('stream_event'),
  event: z.looseObject({
    type: z.string(),
    index: z.number().optional(),
    delta: z
      .looseObject({
        type: z.string().optional(),
        text: z.string().optional(),
        thinking: z.string().optional(),
        partial_json: z.string().optional(),
        signature: z.string().optional(),
        stop_reason: z.string().nullable().optional(),
      })
      .optional(),
    content_block: contentBlockLikeSchema.optional(),
  }),
  parent_tool_use_id: ptu,
  session_id: z.string(),
  uuid: z.string().optional(),
  ...uuids,
});
export type StreamEventLike = z.infer<typeof streamEventSchema>;

export const assistantSchema = z.looseObject({
  type: z.literal('assistant'),
  message: z.looseObject({
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.array(contentBlockLikeSchema),
    stop_reason: z.string().nullable().optional(),
  }),
  parent_tool_use_id: ptu,
  session_id: z.string(),
  uuid: z.string().optional(),
  error: z.string().optional(),
  aborted: z.boolean().optional(),
  agent_id: z.string().optional(),
  subagent_type: z.string().optional(),
  ...uuids,
});
export type AssistantLike = z.infer<typeof assistantSchema>;

export const userSchema = z.looseObject({
  type: z.literal('user'),
  message: z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(contentBlockLikeSchema)]),
  }),
  parent_tool_use_id: ptu,
  session_id: z.string().optional(),
  uuid: z.string().optional(),
  tool_use_result: z.unknown().optional(),
  isSynthetic: z.boolean().optional(),
});
export type UserLike = z.infer<typeof userSchema>;

export const resultSchema = z.looseObject({
  type: z.literal('result'),
  subtype: z.string(),
  is_error: z.boolean(),
  result: z.string().optional(),
  errors: z.array(z.string()).optional(),
  session_id: z.string(),
  num_turns: z.number().optional(),
  duration_ms: z.number().optional(),
  total_cost_usd: z.number().optional(),
  stop_reason: z.string().nullable().optional(),
  terminal_reason: z.string().optional(),
  api_error_status: z.number().nullable().optional(),
  permission_denials: z.array(z.looseObject({ tool_name: z.string(), tool_use_id: z.string() })).optional(),
  ...uuids,
});
export type ResultLike = z.infer<typeof resultSchema>;

/** Subscription limit state; `resetsAt` is epoch seconds. Seen before the synthetic "You've hit your … limit" reply. */
export const rateLimitEventSchema = z.looseObject({
  type: z.literal('rate_limit_event'),
  rate_limit_info: z.looseObject({
    status: z.string().optional(),
    resetsAt: z.number().optional(),
    rateLimitType: z.string().optional(),
  }),
  session_id: z.string().optional(),
});
export type RateLimitEventLike = z.infer<typeof rateLimitEventSchema>;

/** Not in the SDK's union (the d.ts only mentions it); emitted for pushed messages that carry a uuid. */
export const commandLifecycleSchema = z.looseObject({
  type: z.literal('command_lifecycle'),
  command_uuid: z.string(),
  state: z.string(),
});
export type CommandLifecycleLike = z.infer<typeof commandLifecycleSchema>;

/** Any message as yielded by the SDK, before narrowing. */
export type SdkMessageLike = { type: string; subtype?: string; [key: string]: unknown };

type SdkTopType = SDKMessage['type'];
type SdkSystemSubtype = Extract<SDKMessage, { type: 'system' }>['subtype'];

/**
 * Every top-level type of the SDK's union, marked handled or ignored. A Record
 * over the SDK's own union: an SDK upgrade that adds a type fails the type
 * check here until someone decides what to do with it.
 */
export const SDK_MESSAGE_TYPES = {
  assistant: 'handled',
  user: 'handled',
  result: 'handled',
  system: 'handled',
  stream_event: 'handled',
  tool_progress: 'ignored',
  auth_status: 'ignored',
  tool_use_summary: 'ignored',
  rate_limit_event: 'handled',
  prompt_suggestion: 'ignored',
  conversation_reset: 'ignored',
} as const satisfies Record<SdkTopType, 'handled' | 'ignored'>;

/** The same for system subtypes. */
export const SDK_SYSTEM_SUBTYPES = {
  init: 'handled',
  status: 'handled',
  api_retry: 'handled',
  permission_denied: 'handled',
  task_started: 'handled',
  task_progress: 'handled',
  task_updated: 'handled',
  task_notification: 'handled',
  background_tasks_changed: 'handled',
  thinking_tokens: 'ignored',
  compact_boundary: 'ignored',
  control_request_progress: 'ignored',
  model_refusal_fallback: 'ignored',
  model_refusal_no_fallback: 'ignored',
  local_command_output: 'ignored',
  hook_started: 'ignored',
  hook_progress: 'ignored',
  hook_response: 'ignored',
  plugin_install: 'ignored',
  session_state_changed: 'ignored',
  worker_shutting_down: 'ignored',
  commands_changed: 'ignored',
  notification: 'ignored',
  files_persisted: 'ignored',
  memory_recall: 'ignored',
  elicitation_complete: 'ignored',
  mirror_error: 'ignored',
  informational: 'ignored',
  session_writes_lost: 'ignored',
} as const satisfies Record<SdkSystemSubtype, 'handled' | 'ignored'>;

type IgnoredOf<T extends Record<string, string>> = { [K in keyof T]: T[K] extends 'ignored' ? K : never }[keyof T];
/** Known variants Bubble deliberately ignores, by name ('system/<subtype>' for system messages). */
export type IgnoredSdkVariant =
  | IgnoredOf<typeof SDK_MESSAGE_TYPES>
  | `system/${IgnoredOf<typeof SDK_SYSTEM_SUBTYPES> & string}`;

export type NarrowedSdkMessage =
  | { kind: 'init'; message: SystemInitLike }
  | { kind: 'status'; message: SystemStatusLike }
  | { kind: 'api_retry'; message: ApiRetryLike }
  | { kind: 'permission_denied'; message: PermissionDeniedLike }
  | { kind: 'task_started'; message: TaskStartedLike }
  | { kind: 'task_progress'; message: TaskProgressLike }
  | { kind: 'task_updated'; message: TaskUpdatedLike }
  | { kind: 'task_notification'; message: TaskNotificationLike }
  | { kind: 'background_tasks_changed'; message: BackgroundTasksChangedLike }
  | { kind: 'stream_event'; message: StreamEventLike }
  | { kind: 'assistant'; message: AssistantLike }
  | { kind: 'user'; message: UserLike }
  | { kind: 'result'; message: ResultLike }
  | { kind: 'command_lifecycle'; message: CommandLifecycleLike }
  | { kind: 'rate_limit'; message: RateLimitEventLike }
  | { kind: 'ignored'; variant: IgnoredSdkVariant; message: SdkMessageLike }
  /** An unknown type, or a known one whose shape did not parse: skip it (debug log), never crash. */
  | { kind: 'unknown'; message: unknown; reason: string };

export type NarrowedKind = NarrowedSdkMessage['kind'];

function parsed<K extends NarrowedKind, S extends z.ZodType>(kind: K, schema: S, message: unknown): NarrowedSdkMessage {
  const result = schema.safeParse(message);
  if (result.success) return { kind, message: result.data } as NarrowedSdkMessage;
  const where = result.error.issues[0];
  return {
    kind: 'unknown',
    message,
    reason: `${kind} did not match its shape${where ? ` at ${where.path.join('.') || '(root)'}: ${where.message}` : ''}`,
  };
}

function hasOwn<T extends object>(table: T, key: string): key is Extract<keyof T, string> {
  return Object.hasOwn(table, key);
}

/** Narrows one SDK message to the shapes Bubble consumes. Pure; never throws. */
export function narrowSdkMessage(message: unknown): NarrowedSdkMessage {
  if (typeof message !== 'object' || message === null) {
    return { kind: 'unknown', message, reason: 'not an object' };
  }
  const m = message as SdkMessageLike;
  switch (m.type) {
    case 'assistant':
      return parsed('assistant', assistantSchema, m);
    case 'user':
      return parsed('user', userSchema, m);
    case 'result':
      return parsed('result', resultSchema, m);
    case 'stream_event':
      return parsed('stream_event', streamEventSchema, m);
    case 'command_lifecycle':
      return parsed('command_lifecycle', commandLifecycleSchema, m);
    case 'rate_limit_event':
      return parsed('rate_limit', rateLimitEventSchema, m);
    case 'system':
      return narrowSystem(m);
    default:
      if (typeof m.type === 'string' && hasOwn(SDK_MESSAGE_TYPES, m.type)) {
        return { kind: 'ignored', variant: m.type as IgnoredSdkVariant, message: m };
      }
      return { kind: 'unknown', message, reason: `unknown message type ${JSON.stringify(m.type)}` };
  }
}

function narrowSystem(m: SdkMessageLike): NarrowedSdkMessage {
  switch (m.subtype) {
    case 'init':
      return parsed('init', systemInitSchema, m);
    case 'status':
      return parsed('status', systemStatusSchema, m);
    case 'api_retry':
      return parsed('api_retry', apiRetrySchema, m);
    case 'permission_denied':
      return parsed('permission_denied', permissionDeniedSchema, m);
    case 'task_started':
      return parsed('task_started', taskStartedSchema, m);
    case 'task_progress':
      return parsed('task_progress', taskProgressSchema, m);
    case 'task_updated':
      return parsed('task_updated', taskUpdatedSchema, m);
    case 'task_notification':
      return parsed('task_notification', taskNotificationSchema, m);
    case 'background_tasks_changed':
      return parsed('background_tasks_changed', backgroundTasksChangedSchema, m);
    default:
      if (typeof m.subtype === 'string' && hasOwn(SDK_SYSTEM_SUBTYPES, m.subtype)) {
        return { kind: 'ignored', variant: `system/${m.subtype}` as IgnoredSdkVariant, message: m };
      }
      return { kind: 'unknown', message: m, reason: `unknown system subtype ${JSON.stringify(m.subtype)}` };
  }
}

/** For exhaustive switches over NarrowedSdkMessage['kind']: `default: return assertNever(x)`. Protocol's, re-exported. */
export { assertNever } from '@bubble/protocol';
