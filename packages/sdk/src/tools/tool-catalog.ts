import { isBubbleApiError } from '../client/bubble-api-error.js';
import { ARTIFACT_TOOLS } from './artifact-tools.js';
import { artifactsManifestMatches } from './artifacts-manifest.js';
import { browseThreadTool } from './browse-thread.js';
import { inviteToThreadTool } from './invite-to-thread.js';
import type { LocalTool, ToolClient } from './local-tool.js';
import { openSubthreadTool } from './open-subthread.js';
import { searchPrincipalsTool } from './search-principals.js';
import { looksLikeThreadField, threadFieldNames } from './thread-scope.js';

/** The tools every bot gets. */
export const CORE_TOOLS: readonly LocalTool[] = Object.freeze([
  browseThreadTool,
  openSubthreadTool,
  searchPrincipalsTool,
  inviteToThreadTool,
] as LocalTool[]);

export interface ToolCatalog {
  readonly tools: readonly LocalTool[];
  /** Which extensions' tools are in the catalog. */
  readonly extensions: { readonly artifacts: boolean };
  get(name: string): LocalTool | undefined;
}

/**
 * A catalog from a list of tools (names must be unique, and every input field that names a thread
 * is declared with `threadIdInput`, so that `runTool` holds it to the run's thread).
 */
export function toolCatalog(tools: readonly LocalTool[], extensions: { artifacts: boolean }): ToolCatalog {
  const byName = new Map<string, LocalTool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`two tools are named ${tool.name}`);
    const scoped = threadFieldNames(tool.inputSchema);
    const unscoped = Object.keys(tool.inputSchema.shape).find(
      (name) => looksLikeThreadField(name) && !scoped.includes(name),
    );
    if (unscoped !== undefined) {
      throw new Error(`${tool.name}'s ${unscoped} names a thread: declare it with threadIdInput`);
    }
    byName.set(tool.name, tool);
  }
  return {
    tools: Object.freeze([...tools]),
    extensions: Object.freeze({ ...extensions }),
    get: (name) => byName.get(name),
  };
}

/**
 * The bot's local tool catalog: the core tools, plus the artifacts tools when `GET /v1/info`
 * advertises exactly the artifacts manifest this SDK knows. A server whose `/v1/info` cannot be
 * parsed gets no extension tools; a server that cannot be reached is an error (retry later).
 */
export async function buildToolCatalog(
  client: Pick<ToolClient, 'info'>,
  options: { signal?: AbortSignal } = {},
): Promise<ToolCatalog> {
  let artifacts = false;
  try {
    const info = await client.info(options.signal ? { signal: options.signal } : {});
    artifacts = artifactsManifestMatches(info);
  } catch (error) {
    if (!(isBubbleApiError(error) && error.code === 'invalid_response')) throw error;
  }
  return toolCatalog(artifacts ? [...CORE_TOOLS, ...ARTIFACT_TOOLS] : CORE_TOOLS, { artifacts });
}
