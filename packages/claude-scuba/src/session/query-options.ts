import type { CanUseTool, Options } from '@anthropic-ai/claude-agent-sdk';
import { dirname, join } from 'node:path';
import { isolationOptions, type ToolIsolation } from '@bubble/engine';
import type { ScubaConfig } from '../config/resolve-config.js';

/** Where each thread's CLI keeps its temp files (sub-agent outputs, sockets): out of every tool's reach but its own. */
export function tmpRootOf(config: ScubaConfig): string {
  return join(dirname(config.claude.configDir), 'tmp');
}

export interface QueryOptionsInput {
  config: ScubaConfig;
  threadId: string;
  /** The thread's workspace (fixed once, stored with the session). */
  cwd: string;
  /** The CLI child's whole environment (engine `buildChildEnv`). */
  env: Record<string, string>;
  canUseTool: CanUseTool;
  /** What the tools may reach: the sandbox and its rules, or no tools at all. */
  isolation: ToolIsolation;
  /** The stored Claude session id, after an idle close or a restart. */
  resume?: string;
  mcpServers?: Options['mcpServers'];
}

/**
 * The options of a thread's one streaming query (engine-notes §1, §6). Pure.
 * Decisions: Claude Code's own system prompt (omitting it gives a one-line
 * prompt), no settings from disk (isolation), partial messages on (deltas),
 * sub-agent text forwarded (so subthreads show what the agent says), and no
 * `allowedTools` (it would silently bypass the approvals).
 */
export function buildQueryOptions(input: QueryOptionsInput): Options {
  const { config } = input;
  const context = [
    `You are ${config.bubble.principalId}, a participant in the Bubble thread ${input.threadId}, shared by humans and other bots.`,
    'Messages from several people arrive as "Name (id): text". Address people by name when several are talking.',
    'Tools that need permission wait for an approval from a person on the thread.',
    input.isolation.kind === 'sandbox'
      ? `Commands run in a sandbox: they may write only inside your workspace ${input.cwd}, have no network, and cannot read the bot's own files.`
      : input.isolation.kind === 'unavailable'
        ? 'You have no tools on this machine: its sandbox cannot start.'
        : '',
  ]
    .filter((line) => line !== '')
    .join(' ');
  const append = config.claude.systemPrompt.append ? `${context}\n\n${config.claude.systemPrompt.append}` : context;
  const options: Options = {
    cwd: input.cwd,
    env: input.env,
    systemPrompt: { type: 'preset', preset: 'claude_code', append },
    settingSources: [],
    includePartialMessages: true,
    forwardSubagentText: true,
    permissionMode: config.claude.permissionMode,
    maxTurns: config.claude.maxTurns,
    canUseTool: input.canUseTool,
  };
  if (config.claude.permissionMode === 'bypassPermissions') options.allowDangerouslySkipPermissions = true;
  if (config.claude.model !== undefined) options.model = config.claude.model;
  if (config.claude.tools !== undefined) options.tools = [...config.claude.tools];
  // After the configured tools: where the sandbox cannot start, no tool set survives.
  Object.assign(options, isolationOptions(input.isolation, input.cwd, input.env.TMPDIR));
  if (input.resume !== undefined) options.resume = input.resume;
  if (input.mcpServers !== undefined) options.mcpServers = input.mcpServers;
  return options;
}
