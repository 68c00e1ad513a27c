import { z } from 'zod';

/**
 * The script format: an ordered list of rules. The first rule that is not used
 * up and whose `match` holds answers a main-loop or sub-agent request.
 */

/** A text condition: a substring, or `{ regex, flags? }`. */
export const TextMatchSchema = z.union([
  z.string(),
  z
    .strictObject({ regex: z.string(), flags: z.string().optional() })
    .refine((m) => isValidRegex(m.regex, m.flags), { message: 'not a valid regular expression (or flags)' }),
]);
export type TextMatch = z.infer<typeof TextMatchSchema>;

export const ToolResultMatchSchema = z.union([
  z.literal(true),
  z.strictObject({
    /** Tool name of the tool_use the result answers (resolved by id). */
    name: z.string().optional(),
    isError: z.boolean().optional(),
  }),
]);
export type ToolResultMatch = z.infer<typeof ToolResultMatchSchema>;

export const MatchSchema = z.strictObject({
  /** Against the last user text, `<system-reminder>` blocks removed. */
  text: TextMatchSchema.optional(),
  /** The last user message carries a tool_result (optionally for this tool / error state). */
  toolResult: ToolResultMatchSchema.optional(),
  /** `true`: only sub-agent requests; `false`: only main-loop requests. */
  subagent: z.boolean().optional(),
  /** Only requests of this CLI session (set it with the SDK's `sessionId` option). */
  sessionId: z.string().min(1).optional(),
  /**
   * `true`: the last user message carries a `<task-notification>` (the turn the CLI
   * starts by itself after a background agent ends); `false`: it does not.
   */
  taskNotification: z.boolean().optional(),
});
export type Match = z.infer<typeof MatchSchema>;

const delayMs = z.number().int().min(0).max(600_000);
const chunkSize = z.number().int().min(1);

export const TextBlockSchema = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  /** Words per delta (default 1). Ignored when `chunkChars` is set. */
  chunkWords: chunkSize.optional(),
  /** Characters per delta. */
  chunkChars: chunkSize.optional(),
  /** Pause before each delta, for slow streams. */
  delayMs: delayMs.optional(),
});
export type TextBlock = z.infer<typeof TextBlockSchema>;

export const ThinkingBlockSchema = z.strictObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
  chunkWords: chunkSize.optional(),
  chunkChars: chunkSize.optional(),
  delayMs: delayMs.optional(),
});
export type ThinkingBlock = z.infer<typeof ThinkingBlockSchema>;

export const ToolUseBlockSchema = z.strictObject({
  type: z.literal('tool_use'),
  /** Any tool: Bash, Read, Agent, mcp__bubble__*, AskUserQuestion, … */
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  /** Generated as `toolu_…` when absent. */
  id: z.string().min(1).optional(),
  /** Characters of JSON per input_json_delta (default 24). */
  chunkChars: chunkSize.optional(),
  delayMs: delayMs.optional(),
});
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;

export const ReplyBlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ThinkingBlockSchema,
  ToolUseBlockSchema,
]);
export type ReplyBlock = z.infer<typeof ReplyBlockSchema>;

export const ErrorStatusSchema = z.union([
  z.literal(400),
  z.literal(401),
  z.literal(403),
  z.literal(404),
  z.literal(413),
  z.literal(429),
  z.literal(500),
  z.literal(529),
]);
export type ErrorStatus = z.infer<typeof ErrorStatusSchema>;

export const ErrorActionSchema = z.strictObject({
  status: ErrorStatusSchema,
  /** Defaults to the real API's message for that status. */
  message: z.string().optional(),
  /** 429 only: the `retry-after` header and the `anthropic-ratelimit-*-reset` times. Default 30. */
  retryAfterSeconds: z.number().int().min(0).optional(),
  /** Extra response headers (e.g. `anthropic-ratelimit-unified-*`). */
  headers: z.record(z.string(), z.string()).optional(),
  /**
   * Streaming requests only: answer 200, start the message, then send an SSE
   * `error` event (as the real API does when it overloads mid-stream).
   */
  midStream: z.boolean().optional(),
});
export type ErrorAction = z.infer<typeof ErrorActionSchema>;

export const UsageSchema = z.strictObject({
  input_tokens: z.number().int().min(0).optional(),
  output_tokens: z.number().int().min(0).optional(),
  cache_creation_input_tokens: z.number().int().min(0).optional(),
  cache_read_input_tokens: z.number().int().min(0).optional(),
});
export type UsageOverride = z.infer<typeof UsageSchema>;

export const StopReasonSchema = z.enum([
  'end_turn',
  'tool_use',
  'max_tokens',
  'stop_sequence',
  'pause_turn',
  'refusal',
]);
export type StopReason = z.infer<typeof StopReasonSchema>;

export const RuleSchema = z
  .strictObject({
    /** Shown in recorded requests and logs. */
    name: z.string().optional(),
    match: MatchSchema.optional(),
    /** How many requests this rule answers before it is used up. Default 1. */
    times: z.union([z.number().int().min(1), z.literal('always')]).optional(),
    /** Wait this long before sending the response headers. */
    delayMs: delayMs.optional(),
    reply: z.array(ReplyBlockSchema).min(1).optional(),
    error: ErrorActionSchema.optional(),
    /** Destroy the connection without answering (the client sees a network error). */
    disconnect: z.literal(true).optional(),
    /** Overrides the derived stop reason (`tool_use` if any tool_use block, else `end_turn`). */
    stopReason: StopReasonSchema.optional(),
    /** Overrides the reported token usage (e.g. to drive cost budgets). */
    usage: UsageSchema.optional(),
  })
  .superRefine((rule, ctx) => {
    const actions = [rule.reply, rule.error, rule.disconnect].filter((a) => a !== undefined);
    if (actions.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'a rule needs exactly one of "reply", "error" or "disconnect"',
      });
    }
  });
export type Rule = z.infer<typeof RuleSchema>;

export const ScriptSchema = z.array(RuleSchema);
export type Script = z.infer<typeof ScriptSchema>;

function isValidRegex(source: string, flags?: string): boolean {
  try {
    new RegExp(source, flags);
    return true;
  } catch {
    return false;
  }
}
