import type { CanUseTool, Options } from '@anthropic-ai/claude-agent-sdk';
import type { ScubaConfig } from '../config/resolve-config.js';

export interface QueryOptionsInput {
  config: ScubaConfig;
  threadId: string;
  /** The thread's workspace (fixed once, stored with the session). */
  cwd: string;
  /** The CLI child's whole environment (engine `buildChildEnv`). */
  env: Record<string, string>;
  canUseTool: CanUseTool;
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
  ].join(' ');
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
  if (input.resume !== undefined) options.resume = input.resume;
  if (input.mcpServers !== undefined) options.mcpServers = input.mcpServers;
  return options;
}
