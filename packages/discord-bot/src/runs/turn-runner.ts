import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CanUseTool } from '@anthropic-ai/claude-agent-sdk';
import {
  buildChildEnv,
  makePrivateDir,
  startLiveQuery,
  type EngineErrorClassification,
  type ResultLike,
  type ToolIsolation,
  type UserContent,
} from '@bubble/engine';
import type { Logger } from 'pino';
import { buildTurnOptions, type TurnKind } from './turn-options.js';

/** What every turn of this bot shares: where the CLI lives and how it may run. */
export interface TurnEnvironment {
  /** PATH for the CLI child. */
  childPath: string;
  /** CLAUDE_CONFIG_DIR (and HOME) of every run: all transcripts. */
  configDir: string;
  /** Under it each thread's CLI gets a temp folder of its own (the sandbox lets commands write there, so it is never shared). */
  tmpRoot: string;
  baseUrl: string | undefined;
  maxRetries: number;
  /** Running as root: bypassPermissions then needs IS_SANDBOX=1 (engine-notes §1). */
  isRoot: boolean;
  isolation: ToolIsolation;
  approvals: 'none' | 'buttons';
  model: string | undefined;
  chatPrompt: string | undefined;
  agenticAppend: string | undefined;
  logger: Logger;
}

export interface TurnInput {
  kind: TurnKind;
  cwd: string;
  /** Names the turn's own temp folder under `tmpRoot`: the thread and the sender (`<threadId>/<userId>`), or one per `/ask`. */
  tmpKey: string;
  /** The acting user's own token: the sender of the message that started the turn. */
  claudeToken: string;
  githubToken: string | undefined;
  prompt: UserContent;
  model: string | undefined;
  /** The thread's stored session id; undefined starts a new session. */
  resume: string | undefined;
  /** Asks the sender (agentic mode with button approvals); undefined: nothing may prompt. */
  canUseTool: CanUseTool | undefined;
  signal: AbortSignal;
  onText(delta: string): void;
  /** A tool call of the main agent started (for a status line). */
  onTool?(name: string): void;
  /** The stored session was gone ("No conversation found") and a new one is starting. */
  onSessionLost?(lostId: string): void;
}

export type TurnOutcome =
  | { status: 'ok'; sessionId: string | undefined; transcript: boolean }
  | { status: 'failed'; classified: EngineErrorClassification }
  | { status: 'aborted' };

/**
 * Runs one turn as one CLI process (seed 004: a subprocess per run, bounded by
 * the run queue): the prompt is pushed on a streaming input, which keeps the
 * control channel open for `canUseTool`, and the input ends once the result
 * is in. A stored session that the CLI no longer knows is replaced once: a
 * new session and one retry, so a thread is never stuck on a lost transcript.
 */
export async function runTurn(env: TurnEnvironment, input: TurnInput): Promise<TurnOutcome> {
  const first = await attempt(env, input, input.resume);
  if (
    first.status === 'failed' &&
    first.classified.kind === 'session_not_found' &&
    input.resume !== undefined &&
    !input.signal.aborted
  ) {
    env.logger.warn({ sessionId: input.resume }, 'the stored Claude session is gone; starting a new one');
    input.onSessionLost?.(input.resume);
    return attempt(env, input, undefined);
  }
  return first;
}

async function attempt(env: TurnEnvironment, input: TurnInput, resume: string | undefined): Promise<TurnOutcome> {
  if (input.signal.aborted) return { status: 'aborted' };
  const tmpDir = join(env.tmpRoot, input.tmpKey);
  makePrivateDir(input.cwd);
  makePrivateDir(tmpDir);
  const bypass = input.kind === 'agentic' && env.isolation.kind === 'sandbox' && env.approvals === 'none';
  // One turn per process: a background task would be cut off when the turn ends.
  const extra: Record<string, string> = { CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: '1' };
  const github = input.githubToken !== undefined && input.kind === 'agentic' && env.isolation.kind === 'sandbox';
  if (github && input.githubToken !== undefined) {
    extra.GH_TOKEN = input.githubToken;
    extra.GITHUB_TOKEN = input.githubToken;
  }
  // Inside Claude Code's sandbox, root may skip permission prompts (engine-notes §1, §8).
  if (bypass && env.isRoot) extra.IS_SANDBOX = '1';
  const childEnv = buildChildEnv({
    path: env.childPath,
    configDir: env.configDir,
    credential: { kind: 'oauth', token: input.claudeToken },
    maxRetries: env.maxRetries,
    tmpDir,
    extra,
    baseUrl: env.baseUrl,
  });
  const options = buildTurnOptions({
    kind: input.kind,
    cwd: input.cwd,
    env: childEnv,
    canUseTool: input.canUseTool,
    isolation: env.isolation,
    approvals: env.approvals,
    model: input.model ?? env.model,
    resume,
    chatPrompt: env.chatPrompt,
    agenticAppend: env.agenticAppend,
    githubDomains: github,
  });
  const live = startLiveQuery({ options, logger: env.logger });
  const onAbort = (): void => live.close();
  input.signal.addEventListener('abort', onAbort, { once: true });
  live.push(input.prompt);

  let result: ResultLike | undefined;
  let wroteText = false;
  try {
    for await (const narrowed of live.narrowed) {
      if (narrowed.kind === 'stream_event') {
        const { event, parent_tool_use_id: parent } = narrowed.message;
        if (parent !== null && parent !== undefined) continue;
        if (event.type === 'content_block_start' && event.content_block?.type === 'text' && wroteText)
          input.onText('\n\n');
        if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta' && event.delta.text) {
          wroteText = true;
          input.onText(event.delta.text);
        }
      } else if (narrowed.kind === 'assistant' && (narrowed.message.parent_tool_use_id ?? null) === null) {
        for (const block of narrowed.message.message.content) {
          if (block.type === 'tool_use' && typeof block.name === 'string') input.onTool?.(block.name);
        }
      } else if (narrowed.kind === 'result') {
        result = narrowed.message;
        // One turn per process: let the CLI finish and exit.
        live.end();
      }
    }
  } finally {
    input.signal.removeEventListener('abort', onAbort);
  }
  const end = await live.ended;
  if (input.signal.aborted) return { status: 'aborted' };
  if (result !== undefined && !result.is_error) {
    return {
      status: 'ok',
      sessionId: result.session_id,
      transcript: transcriptExists(env.configDir, result.session_id),
    };
  }
  if (result !== undefined) return { status: 'failed', classified: live.classify(result, new Date()) };
  return {
    status: 'failed',
    classified: end.classified ?? {
      kind: 'unknown',
      message: 'Claude Code ended without an answer',
      retryable: true,
      detail: end.error?.message ?? end.reason,
    },
  };
}

/** Whether the CLI wrote this session's transcript (`<configDir>/projects/<cwd key>/<id>.jsonl`, engine-notes §3e). */
export function transcriptExists(configDir: string, sessionId: string): boolean {
  const projects = join(configDir, 'projects');
  let folders: string[];
  try {
    folders = readdirSync(projects);
  } catch {
    return false;
  }
  return folders.some((folder) => existsSync(join(projects, folder, `${sessionId}.jsonl`)));
}
