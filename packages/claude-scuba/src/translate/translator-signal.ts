import type { NarrowedSdkMessage } from '@bubble/engine';
import type { BubbleEventDraft } from './bubble-draft.js';
import type { RunOutcome } from './run-outcome.js';

/** What the translator tells its owner beside the events to append. */
export type TranslatorSignal =
  | { kind: 'session'; sessionId: string; model: string }
  /** A message of a sub-agent (its parent_tool_use_id is not this translator's scope): the owner routes it. */
  | { kind: 'routed'; parentToolUseId: string; message: NarrowedSdkMessage }
  /** An Agent/Task tool use: the owner opens a subthread and appends the parent's `tool-input-available`. */
  | { kind: 'subagent_started'; runId: string; toolCallId: string; toolName: string; input: unknown }
  /** The Agent tool's result (foreground: the sub-agent is done; background: it was launched). */
  | {
      kind: 'subagent_tool_result';
      runId: string;
      toolCallId: string;
      background: boolean;
      isError: boolean;
      result: unknown;
    }
  | {
      kind: 'task';
      subtype: 'task_started' | 'task_progress' | 'task_updated' | 'task_notification';
      taskId: string;
      toolUseId?: string;
      status?: string;
      background?: boolean;
    }
  /** A run the translator opened: a turn nobody asked for, or the follow-up turn for messages pushed mid-turn (`followUp`: the seqs it replies to). */
  | { kind: 'run_opened'; runId: string; unsolicited: boolean; followUp?: number[] }
  /** The result the CLI gives a `shouldQuery: false` push (no model call): no run of its own. */
  | { kind: 'steer_absorbed'; uuids: string[] }
  | { kind: 'run_finished'; runId: string; outcome: RunOutcome }
  | { kind: 'api_retry'; attempt: number; maxRetries: number; errorStatus: number | null; retryDelayMs: number }
  | { kind: 'permission_denied'; toolName: string; toolUseId: string; message: string }
  | { kind: 'rate_limit'; status?: string; resetsAt?: string; rateLimitType?: string }
  | { kind: 'skipped'; reason: string };

export interface TranslateStep {
  events: BubbleEventDraft[];
  signals: TranslatorSignal[];
}

/** The pushed-message uuids a message answers (`user_message_uuids`, else `user_message_uuid`). */
export function uuidsOf(message: {
  user_message_uuid?: string | undefined;
  user_message_uuids?: string[] | undefined;
}): string[] {
  if (message.user_message_uuids && message.user_message_uuids.length > 0) return message.user_message_uuids;
  return message.user_message_uuid === undefined ? [] : [message.user_message_uuid];
}

/** A tool_result's content as text: a string, or the text blocks joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block) =>
        typeof block === 'object' && block !== null && typeof (block as { text?: unknown }).text === 'string'
          ? (block as { text: string }).text
          : '',
      )
      .filter((text) => text !== '')
      .join('\n');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}
