import { createSdkMcpServer, tool, type McpSdkServerConfigWithInstance } from '@anthropic-ai/claude-agent-sdk';
import { runTool, type LocalTool, type ToolCatalog, type ToolClient } from '@bubble/sdk';

export const BUBBLE_MCP_NAME = 'bubble';
export const BUBBLE_MCP_PREFIX = `mcp__${BUBBLE_MCP_NAME}__`;

/** Which thread, run and tool call an approved call belongs to. */
export interface McpCallContext {
  /** The session's thread: the call may act on it and its subthreads only. */
  runThreadId: string;
  /** The thread the call comes from (a sub-agent's subthread for its calls), the tools' default. */
  threadId: string;
  runId: string;
  toolCallId: string;
  /** A participant's `tool_call_result` for this call: the handler returns it instead of running the tool. */
  supplied?: { output: unknown; isError: boolean };
}

/** How many approved calls are remembered (a call approved and never run is forgotten oldest first). */
const MAX_WAITING = 1000;

/** The key the CLI puts in an MCP call's `_meta`: the tool_use id of the call (seen in CLI 2.1.33). */
export const TOOL_USE_ID_META = 'claudecode/toolUseId';

/**
 * Approved calls waiting for their handler, by tool_use id. `canUseTool`
 * knows the id, the thread and the run; the MCP handler gets the id from the
 * request's `_meta` (`claudecode/toolUseId`), so each call finds its own
 * context, and a call approved but never run cannot hand its context to
 * another.
 */
export class McpCallBroker {
  readonly #waiting = new Map<string, McpCallContext>();

  approved(context: McpCallContext): void {
    this.#waiting.set(context.toolCallId, context);
    if (this.#waiting.size > MAX_WAITING) this.#waiting.delete(this.#waiting.keys().next().value!);
  }

  take(toolCallId: string | undefined): McpCallContext | undefined {
    if (toolCallId === undefined) return undefined;
    const context = this.#waiting.get(toolCallId);
    this.#waiting.delete(toolCallId);
    return context;
  }
}

export interface BubbleMcpOptions {
  catalog: ToolCatalog;
  /** The bot's own client: every call carries the bot's token, Bubble decides. */
  client: ToolClient;
  principalId: string;
  broker: McpCallBroker;
}

/**
 * The in-process `bubble` MCP server (seed: "Local Bubble tools"): the sdk's
 * tool catalog as SDK MCP tools, `alwaysLoad` so the model sees them without
 * a ToolSearch round (engine-notes §3f). Every call has already been through
 * the approval path (`canUseTool` is called for SDK MCP tools). One instance
 * per query.
 */
export function buildBubbleMcpServer(options: BubbleMcpOptions): McpSdkServerConfigWithInstance {
  const tools = options.catalog.tools.map((local: LocalTool) =>
    tool(local.name, local.description, local.inputSchema.shape, async (args, extra) => {
      const meta = (extra as { _meta?: Record<string, unknown> } | undefined)?._meta;
      const toolUseId = typeof meta?.[TOOL_USE_ID_META] === 'string' ? (meta[TOOL_USE_ID_META] as string) : undefined;
      const approved = options.broker.take(toolUseId);
      if (approved === undefined) {
        // Every call is approved through canUseTool first; one that was not (or cannot be matched) does not run.
        return {
          content: [{ type: 'text' as const, text: 'not_approved: this call has no approval record; it did not run' }],
          isError: true,
        };
      }
      const { supplied, ...context } = approved;
      if (supplied) {
        // Someone on the thread gave this call's result: it stands in for the tool, which does not run.
        const text = typeof supplied.output === 'string' ? supplied.output : JSON.stringify(supplied.output ?? null);
        return { content: [{ type: 'text' as const, text }], ...(supplied.isError ? { isError: true } : {}) };
      }
      const signal = (extra as { signal?: AbortSignal } | undefined)?.signal;
      const outcome = await runTool(local, args, {
        client: options.client,
        principalId: options.principalId,
        ...context,
        signal,
      });
      return outcome.ok
        ? { content: [{ type: 'text' as const, text: JSON.stringify(outcome.result) }] }
        : {
            content: [{ type: 'text' as const, text: `${outcome.error.code}: ${outcome.error.message}` }],
            isError: true,
          };
    }),
  );
  return createSdkMcpServer({ name: BUBBLE_MCP_NAME, version: '1.0.0', tools, alwaysLoad: true });
}
