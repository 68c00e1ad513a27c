import { createSdkMcpServer, tool, type McpSdkServerConfigWithInstance } from '@anthropic-ai/claude-agent-sdk';
import { runTool, type LocalTool, type ToolCatalog, type ToolClient } from '@bubble/sdk';

export const BUBBLE_MCP_NAME = 'bubble';
export const BUBBLE_MCP_PREFIX = `mcp__${BUBBLE_MCP_NAME}__`;

/** Which thread, run and tool call an approved call belongs to. */
export interface McpCallContext {
  threadId: string;
  runId: string;
  toolCallId: string;
}

/**
 * Approved calls waiting for their handler, by MCP tool name. `canUseTool`
 * knows the tool_use id and the run; the MCP handler does not, so the session
 * records each allowed call here and the handler takes the oldest one for its
 * tool (calls of one tool run in the order they were approved).
 */
export class McpCallBroker {
  readonly #waiting = new Map<string, McpCallContext[]>();

  approved(mcpToolName: string, context: McpCallContext): void {
    const list = this.#waiting.get(mcpToolName) ?? [];
    list.push(context);
    this.#waiting.set(mcpToolName, list);
  }

  take(mcpToolName: string): McpCallContext | undefined {
    const list = this.#waiting.get(mcpToolName);
    const context = list?.shift();
    if (list && list.length === 0) this.#waiting.delete(mcpToolName);
    return context;
  }
}

export interface BubbleMcpOptions {
  catalog: ToolCatalog;
  /** The bot's own client: every call carries the bot's token, Bubble decides. */
  client: ToolClient;
  principalId: string;
  broker: McpCallBroker;
  /** Used when a call reached the handler without an approval record (it cannot normally happen). */
  fallback: () => McpCallContext;
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
      const context = options.broker.take(`${BUBBLE_MCP_PREFIX}${local.name}`) ?? options.fallback();
      const signal = (extra as { signal?: AbortSignal } | undefined)?.signal;
      const outcome = await runTool(local, args, {
        client: options.client,
        principalId: options.principalId,
        ...context,
        ...(signal ? { signal } : {}),
      });
      return outcome.ok
        ? { content: [{ type: 'text' as const, text: JSON.stringify(outcome.result) }] }
        : { content: [{ type: 'text' as const, text: `${outcome.error.code}: ${outcome.error.message}` }], isError: true };
    }),
  );
  return createSdkMcpServer({ name: BUBBLE_MCP_NAME, version: '1.0.0', tools, alwaysLoad: true });
}
