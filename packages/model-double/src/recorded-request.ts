import type { RequestKind, TaskNotificationInfo, ToolResultInfo } from './request-info.js';
import type { Completion } from './respond.js';

/** One request the double received, as its log and the control routes show it. */
export interface RecordedRequest {
  /** 0-based arrival order (control routes are not counted). */
  seq: number;
  requestId: string;
  receivedAt: number;
  method: string;
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string;
  /** The query string including `?`, or ''. */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or null when absent or not JSON. */
  body: unknown;
  kind: RequestKind;
  stream: boolean;
  model: string | null;
  /** The last user text, `<system-reminder>` blocks removed. */
  lastUserText: string;
  toolResults: ToolResultInfo[];
  subagent: boolean;
  /** The CLI session id (`x-claude-code-session-id`, else `metadata.user_id`), if the request carries one. */
  sessionId: string | null;
  taskNotification: TaskNotificationInfo | null;
  /** The script rule that answered, if any. */
  rule: { index: number; name: string | null } | null;
  /** A script was set and no rule matched this main/sub-agent request. */
  unmatched: boolean;
  /** The HTTP status answered (0 while undecided or when the connection was dropped on purpose). */
  status: number;
  /** `aborted`: the client went away before the response ended; `disconnected`: a disconnect rule dropped it. */
  completion: 'pending' | Completion | 'disconnected';
}
