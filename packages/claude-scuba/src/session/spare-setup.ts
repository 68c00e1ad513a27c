import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CanUseTool, Options } from '@anthropic-ai/claude-agent-sdk';
import { SpareEngine, type RunQueue, type SpareSetup, type ToolIsolation } from '@bubble/engine';
import type { Logger } from 'pino';
import type { ToolCatalog, ToolClient } from '@bubble/sdk';
import type { ScubaConfig } from '../config/resolve-config.js';
import { BUBBLE_MCP_NAME, buildBubbleMcpServer, McpCallBroker, type McpCallContext } from './bubble-mcp.js';
import { makePrivateDir } from '@bubble/engine';
import { buildSpareOptions, tmpRootOf } from './query-options.js';

/** What a claimed spare's callbacks reach: the tool gate of the thread that claimed it. */
export interface SpareBinding {
  canUseTool: CanUseTool;
  /** The thread's approved local-tool calls, which the spare's `bubble` MCP handlers take. */
  mcpCalls: McpCallBroker;
}

export interface SpareSetupOptions {
  config: ScubaConfig;
  /** The CLI child's environment, built once by the bot; each spare gets its own temp folder in it. */
  childEnv: Record<string, string>;
  isolation: ToolIsolation;
  /** The local `bubble` tools; the same catalog serves every thread. */
  tools?: { catalog: ToolCatalog; client: ToolClient } | undefined;
}

/**
 * A spare's temp folder starts with a dot: `safeDirName` never gives a
 * thread's folder such a name, so no thread's temp files are ever in it.
 */
const SPARE_TMP_PREFIX = '.spare-';

/**
 * One spare CLI's host-level part. What the SDK fixes at start-up but a
 * thread owns is bound late: `canUseTool` and the `bubble` MCP handlers
 * forward to the tool gate of the thread that claimed the spare (before a
 * claim they refuse; no thread's callbacks are reachable), and the CLI's
 * TMPDIR is a fresh folder of the spare's own that becomes the claiming
 * thread's for that query and goes when the CLI exits.
 */
export function prepareSpare(options: SpareSetupOptions, spareId: string): SpareSetup<SpareBinding> {
  const tmpDir = join(tmpRootOf(options.config), `${SPARE_TMP_PREFIX}${spareId}-${randomUUID().slice(0, 8)}`);
  makePrivateDir(tmpDir);
  let binding: SpareBinding | undefined;
  const canUseTool: CanUseTool = async (toolName, input, callOptions) =>
    binding
      ? binding.canUseTool(toolName, input, callOptions)
      : { behavior: 'deny', message: 'this Claude process serves no thread yet' };
  let mcpServers: Options['mcpServers'] | undefined;
  if (options.tools) {
    const server = buildBubbleMcpServer({
      catalog: options.tools.catalog,
      client: options.tools.client,
      principalId: options.config.bubble.principalId,
      broker: new ForwardingBroker(() => binding?.mcpCalls),
    });
    mcpServers = { [BUBBLE_MCP_NAME]: server };
  }
  return {
    options: buildSpareOptions({
      config: options.config,
      env: { ...options.childEnv, CLAUDE_CODE_TMPDIR: tmpDir, TMPDIR: tmpDir },
      canUseTool,
      isolation: options.isolation,
      mcpServers,
      tmpDir,
    }),
    bind: (next) => {
      binding = next;
    },
    dispose: () => rmSync(tmpDir, { recursive: true, force: true }),
  };
}

/** Removes the temp folders of spares a bot that did not stop cleanly left behind. */
export function clearSpareTmp(config: ScubaConfig): void {
  const root = tmpRootOf(config);
  if (!existsSync(root)) return;
  for (const name of readdirSync(root)) {
    if (name.startsWith(SPARE_TMP_PREFIX)) rmSync(join(root, name), { recursive: true, force: true });
  }
}

/** A broker that hands each call to the claiming thread's broker (no calls are approved on it directly). */
class ForwardingBroker extends McpCallBroker {
  readonly #target: () => McpCallBroker | undefined;

  constructor(target: () => McpCallBroker | undefined) {
    super();
    this.#target = target;
  }

  override approved(context: McpCallContext): void {
    this.#target()?.approved(context);
  }

  override take(toolCallId: string | undefined): McpCallContext | undefined {
    return this.#target()?.take(toolCallId);
  }
}

export interface StartSparesOptions extends SpareSetupOptions {
  runQueue: RunQueue;
  logger: Logger;
}

/** The bot's spare CLIs (`limits.spareEngines`), started; undefined when the config turns them off. */
export function startSpares(options: StartSparesOptions): SpareEngine<SpareBinding> | undefined {
  const count = options.config.limits.spareEngines;
  clearSpareTmp(options.config);
  if (count === 0) return undefined;
  const engine = new SpareEngine<SpareBinding>({
    count,
    runQueue: options.runQueue,
    prepare: (spareId) => prepareSpare(options, spareId),
    logger: options.logger.child({ component: 'spare-engine' }),
  });
  engine.start();
  return engine;
}
