/**
 * What the double needs to know about a Messages API request body, read
 * leniently (the body comes from outside): which kind of request it is, the
 * user's text, and the tool results it carries. Pure; no I/O.
 */

export type RequestKind = 'main' | 'subagent' | 'title' | 'suggestion' | 'count_tokens' | 'other';

export interface ToolResultInfo {
  toolUseId: string;
  /** Name of the tool_use with that id in an earlier assistant message, if found. */
  toolName: string | null;
  isError: boolean;
}

/** A `<task-notification>` the CLI sends (inside a system reminder) when a background task ends. */
export interface TaskNotificationInfo {
  taskId: string | null;
  toolUseId: string | null;
  status: string | null;
}

export interface RequestInfo {
  kind: RequestKind;
  stream: boolean;
  model: string;
  /** The last non-reminder text of the last user message, `<system-reminder>` blocks removed. */
  lastUserText: string;
  /** Tool results carried by the last user message, in order. */
  toolResults: ToolResultInfo[];
  /** Whether the request comes from a sub-agent (built-in or a custom `options.agents` one), not the main loop. */
  subagent: boolean;
  /** The CLI session: the `x-claude-code-session-id` header, else `metadata.user_id`'s `session_id`. */
  sessionId: string | null;
  /** The task notification carried by the last user message (the unsolicited turn after a background agent). */
  taskNotification: TaskNotificationInfo | null;
}

const REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;
/** The opening line of the built-in sub-agents' system prompt. */
const SUBAGENT_MARK = 'You are an agent for Claude Code';
/** The CLI's attribution line (system[0]) says this for every sub-agent, custom ones included. */
const SUBAGENT_ATTRIBUTION = /\bcc_is_subagent=true\b/;
const SUGGESTION_MARK = '[SUGGESTION MODE:';
export const DEFAULT_MODEL = 'claude-model-double';

export function stripReminders(text: string): string {
  return text.replace(REMINDER, '').trim();
}

/** The CLI's request headers the double reads. */
export interface RequestHeaders {
  /** `x-claude-code-session-id`. */
  sessionId?: string | undefined;
  /** `x-claude-code-agent-id`: sent by sub-agents only. */
  agentId?: string | undefined;
}

/** Classifies a parsed `/v1/messages` body and the CLI's headers. */
export function describeMessagesRequest(body: Record<string, unknown>, headers: RequestHeaders = {}): RequestInfo {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  const lastUser = findLast(messages, (m) => isRecord(m) && m.role === 'user');
  const lastUserText = lastUser === undefined ? '' : userText(lastUser);
  const toolResults = lastUser === undefined ? [] : toolResultsOf(lastUser, messages);
  // Built-in sub-agents open with their mark; custom agents (options.agents) keep the SDK's opening line,
  // so they are known by the attribution line or the agent id header, which every sub-agent request carries.
  const subagent =
    (headers.agentId !== undefined && headers.agentId !== '') ||
    systemTexts(body.system).some((t) => t.trimStart().startsWith(SUBAGENT_MARK) || SUBAGENT_ATTRIBUTION.test(t));
  const taskNotification = lastUser === undefined ? null : taskNotificationOf(lastUser);
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : DEFAULT_MODEL;
  const stream = body.stream === true;
  let kind: RequestKind;
  if (isTitleRequest(body)) kind = 'title';
  else if (lastUserText.startsWith(SUGGESTION_MARK)) kind = 'suggestion';
  else kind = subagent ? 'subagent' : 'main';
  const sessionId =
    headers.sessionId !== undefined && headers.sessionId !== '' ? headers.sessionId : sessionFromMetadata(body);
  return { kind, stream, model, lastUserText, toolResults, subagent, sessionId, taskNotification };
}

/** Session-title generation: no tools, and a JSON-schema output format with a `title` property. */
function isTitleRequest(body: Record<string, unknown>): boolean {
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > 0) return false;
  const format = getPath(body, ['output_config', 'format']);
  if (!isRecord(format) || format.type !== 'json_schema') return false;
  const properties = getPath(format, ['schema', 'properties']);
  return isRecord(properties) && 'title' in properties;
}

function userText(message: unknown): string {
  if (!isRecord(message)) return '';
  const content = message.content;
  if (typeof content === 'string') return stripReminders(content);
  if (!Array.isArray(content)) return '';
  for (let i = content.length - 1; i >= 0; i--) {
    const block = content[i];
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') {
      const text = stripReminders(block.text);
      if (text !== '') return text;
    }
  }
  return '';
}

/** The CLI sends `metadata.user_id` as a JSON string carrying `session_id`. */
function sessionFromMetadata(body: Record<string, unknown>): string | null {
  const userId = getPath(body, ['metadata', 'user_id']);
  if (typeof userId !== 'string') return null;
  try {
    const parsed: unknown = JSON.parse(userId);
    return isRecord(parsed) && typeof parsed.session_id === 'string' ? parsed.session_id : null;
  } catch {
    return null;
  }
}

function taskNotificationOf(message: unknown): TaskNotificationInfo | null {
  if (!isRecord(message)) return null;
  const content = message.content;
  const texts =
    typeof content === 'string'
      ? [content]
      : Array.isArray(content)
        ? content.flatMap((b) => (isRecord(b) && b.type === 'text' && typeof b.text === 'string' ? [b.text] : []))
        : [];
  for (let i = texts.length - 1; i >= 0; i--) {
    const body = /<task-notification>([\s\S]*?)<\/task-notification>/.exec(texts[i] as string)?.[1];
    if (body === undefined) continue;
    const tag = (name: string): string | null =>
      new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(body)?.[1]?.trim() ?? null;
    return { taskId: tag('task-id'), toolUseId: tag('tool-use-id'), status: tag('status') };
  }
  return null;
}

function toolResultsOf(message: unknown, messages: unknown[]): ToolResultInfo[] {
  if (!isRecord(message) || !Array.isArray(message.content)) return [];
  const results: ToolResultInfo[] = [];
  for (const block of message.content as unknown[]) {
    if (!isRecord(block) || block.type !== 'tool_result') continue;
    const toolUseId = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
    results.push({ toolUseId, toolName: toolNameFor(toolUseId, messages), isError: block.is_error === true });
  }
  return results;
}

function toolNameFor(toolUseId: string, messages: unknown[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isRecord(m) || m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const block of m.content as unknown[]) {
      if (isRecord(block) && block.type === 'tool_use' && block.id === toolUseId) {
        return typeof block.name === 'string' ? block.name : null;
      }
    }
  }
  return null;
}

function systemTexts(system: unknown): string[] {
  if (typeof system === 'string') return [system];
  if (!Array.isArray(system)) return [];
  return system.flatMap((b) => (isRecord(b) && typeof b.text === 'string' ? [b.text] : []));
}

/** A rough token count (4 characters a token), for usage figures and count_tokens. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return Math.max(1, Math.ceil(text.length / 4));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function getPath(value: unknown, path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

function findLast<T>(items: T[], predicate: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as T;
    if (predicate(item)) return item;
  }
  return undefined;
}
