import { z } from 'zod';

/**
 * The chunks of the Vercel AI SDK UI message stream (`ai` package, UIMessageChunk) that a
 * `message_part` event may carry. Objects are loose: fields a newer `ai` adds pass through,
 * while the fields each chunk needs are checked.
 */
const providerMetadata = z.record(z.string(), z.record(z.string(), z.unknown())).optional();
const id = z.string().min(1);
const toolCallId = z.string().min(1);

const textStart = z.looseObject({ type: z.literal('text-start'), id, providerMetadata });
const textDelta = z.looseObject({ type: z.literal('text-delta'), id, delta: z.string(), providerMetadata });
const textEnd = z.looseObject({ type: z.literal('text-end'), id, providerMetadata });
const reasoningStart = z.looseObject({ type: z.literal('reasoning-start'), id, providerMetadata });
const reasoningDelta = z.looseObject({ type: z.literal('reasoning-delta'), id, delta: z.string(), providerMetadata });
const reasoningEnd = z.looseObject({ type: z.literal('reasoning-end'), id, providerMetadata });
const error = z.looseObject({ type: z.literal('error'), errorText: z.string() });
const toolInputStart = z.looseObject({
  type: z.literal('tool-input-start'),
  toolCallId,
  toolName: z.string(),
  providerExecuted: z.boolean().optional(),
  dynamic: z.boolean().optional(),
});
const toolInputDelta = z.looseObject({ type: z.literal('tool-input-delta'), toolCallId, inputTextDelta: z.string() });
const toolInputAvailable = z.looseObject({
  type: z.literal('tool-input-available'),
  toolCallId,
  toolName: z.string(),
  input: z.unknown(),
  providerExecuted: z.boolean().optional(),
  providerMetadata,
  dynamic: z.boolean().optional(),
});
const toolInputError = z.looseObject({
  type: z.literal('tool-input-error'),
  toolCallId,
  toolName: z.string(),
  input: z.unknown(),
  errorText: z.string(),
});
const toolApprovalRequest = z.looseObject({
  type: z.literal('tool-approval-request'),
  approvalId: z.string(),
  toolCallId,
});
const toolOutputAvailable = z.looseObject({
  type: z.literal('tool-output-available'),
  toolCallId,
  output: z.unknown(),
  providerExecuted: z.boolean().optional(),
  dynamic: z.boolean().optional(),
  preliminary: z.boolean().optional(),
});
const toolOutputError = z.looseObject({ type: z.literal('tool-output-error'), toolCallId, errorText: z.string() });
const toolOutputDenied = z.looseObject({ type: z.literal('tool-output-denied'), toolCallId });
const sourceUrl = z.looseObject({
  type: z.literal('source-url'),
  sourceId: z.string(),
  url: z.string(),
  title: z.string().optional(),
});
const sourceDocument = z.looseObject({
  type: z.literal('source-document'),
  sourceId: z.string(),
  mediaType: z.string(),
  title: z.string(),
  filename: z.string().optional(),
});
const file = z.looseObject({ type: z.literal('file'), url: z.string().min(1), mediaType: z.string().min(1) });
const startStep = z.looseObject({ type: z.literal('start-step') });
const finishStep = z.looseObject({ type: z.literal('finish-step') });
const start = z.looseObject({
  type: z.literal('start'),
  messageId: z.string().optional(),
  messageMetadata: z.unknown().optional(),
});
const finish = z.looseObject({
  type: z.literal('finish'),
  finishReason: z.string().optional(),
  messageMetadata: z.unknown().optional(),
});
const abort = z.looseObject({ type: z.literal('abort') });
const messageMetadata = z.looseObject({ type: z.literal('message-metadata'), messageMetadata: z.unknown() });

const KnownUiChunkSchema = z.discriminatedUnion('type', [
  textStart,
  textDelta,
  textEnd,
  reasoningStart,
  reasoningDelta,
  reasoningEnd,
  error,
  toolInputStart,
  toolInputDelta,
  toolInputAvailable,
  toolInputError,
  toolApprovalRequest,
  toolOutputAvailable,
  toolOutputError,
  toolOutputDenied,
  sourceUrl,
  sourceDocument,
  file,
  startStep,
  finishStep,
  start,
  finish,
  abort,
  messageMetadata,
]);

/** `data-<name>` chunks carry application data. */
const DataUiChunkSchema = z.looseObject({
  type: z.templateLiteral(['data-', z.string().min(1)]),
  id: z.string().optional(),
  data: z.unknown(),
  transient: z.boolean().optional(),
});

export const UiChunkSchema = z.union([KnownUiChunkSchema, DataUiChunkSchema]);
export type UiChunk = z.infer<typeof UiChunkSchema>;
export type KnownUiChunk = z.infer<typeof KnownUiChunkSchema>;
export type DataUiChunk = z.infer<typeof DataUiChunkSchema>;

/** Every chunk type name the schema knows, beside `data-*`. */
export const UI_CHUNK_TYPES = KnownUiChunkSchema.options.map((option) => option.shape.type.value);

/** Where a `tool-input-available` chunk names the subthread its tool call runs in. */
export interface BubbleToolProviderMetadata {
  childThreadId?: string;
}
