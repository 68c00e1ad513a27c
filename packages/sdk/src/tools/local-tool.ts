import { z } from 'zod';
import type { BubbleClient } from '../client/bubble-client.js';
import { isBubbleApiError } from '../client/bubble-api-error.js';
import { outOfScopeMessage, threadOutOfScope } from './thread-scope.js';

/** What the tools need of the bot's own client. */
export type ToolClient = Pick<
  BubbleClient,
  | 'info'
  | 'getThread'
  | 'readEvents'
  | 'createThread'
  | 'searchPrincipals'
  | 'listParticipants'
  | 'addParticipant'
  | 'listArtifacts'
  | 'getArtifact'
  | 'putArtifact'
>;

/** The calling context of one tool call: who calls, from which run of which thread. */
export interface ToolContext {
  /** The bot's own client: every call carries the bot's token, so Bubble decides what is allowed. */
  readonly client: ToolClient;
  /**
   * The thread of the run that makes the call. The tools act on it and its subthreads only
   * (`runTool` refuses any other thread id before a request is made).
   */
  readonly runThreadId: string;
  /**
   * The thread the call comes from, a tool's default: the run's thread, or a sub-agent's subthread
   * of it. A tool may name another thread in scope; the id grants nothing by itself.
   */
  readonly threadId: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly principalId: string;
  readonly signal?: AbortSignal;
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A local tool: engine-agnostic (an engine adapter turns it into, e.g., an MCP tool). The input
 * schema is a zod object so adapters can read its shape or convert it to JSON Schema.
 */
export interface LocalTool<S extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: S;
  handler(input: z.output<S>, context: ToolContext): Promise<JsonValue>;
}

export function defineTool<S extends z.ZodObject>(tool: LocalTool<S>): LocalTool<S> {
  return tool;
}

/** A failure a tool reports on purpose (the input made sense to the schema, not to the tool). */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export type ToolOutcome =
  | { readonly ok: true; readonly result: JsonValue }
  | {
      readonly ok: false;
      readonly error: { readonly code: string; readonly message: string; readonly status?: number };
    };

/**
 * Runs a tool on raw input: validates it, refuses a thread outside the run's thread and its
 * subthreads (`thread_out_of_scope`, before any request), calls the handler, and turns every
 * failure into a tool error (Bubble's 403/404/409 keep their code and status) instead of a throw,
 * so a bad call from a model never takes the bot down.
 */
export async function runTool(tool: LocalTool, rawInput: unknown, context: ToolContext): Promise<ToolOutcome> {
  const parsed = tool.inputSchema.safeParse(rawInput ?? {});
  if (!parsed.success) {
    return {
      ok: false,
      error: { code: 'invalid_input', message: `invalid input for ${tool.name}: ${z.prettifyError(parsed.error)}` },
    };
  }
  const outside = threadOutOfScope(tool.inputSchema, parsed.data as Record<string, unknown>, context);
  if (outside !== undefined) {
    return {
      ok: false,
      error: { code: 'thread_out_of_scope', message: outOfScopeMessage(context.runThreadId, outside) },
    };
  }
  try {
    return { ok: true, result: await tool.handler(parsed.data, context) };
  } catch (error) {
    if (isBubbleApiError(error)) {
      return {
        ok: false,
        error: { code: error.code, status: error.status, message: `Bubble refused: ${error.message}` },
      };
    }
    if (error instanceof ToolError) return { ok: false, error: { code: error.code, message: error.message } };
    return {
      ok: false,
      error: { code: 'tool_failed', message: error instanceof Error ? error.message : String(error) },
    };
  }
}

/** Passes the caller's abort signal on to client calls. */
export function callOptions(context: ToolContext): { signal?: AbortSignal } {
  return context.signal ? { signal: context.signal } : {};
}
