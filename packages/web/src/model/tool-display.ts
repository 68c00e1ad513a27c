import { allAdded, type LineDiff, lineDiff } from './line-diff';
import { cleanToolText, outputObject, outputText } from './tool-output-text';

/** What a call is about, for its icon. */
export type ToolKind =
  | 'command'
  | 'read'
  | 'edit'
  | 'search'
  | 'web'
  | 'helper'
  | 'artifact'
  | 'thread'
  | 'people'
  | 'plan'
  | 'question'
  | 'tool';

/**
 * Where a call stands, as a person reads it: it asks someone (`waiting`), runs, is done, failed,
 * was denied before it ran, was stopped while it ran, or its run ended without an answer.
 */
export type ToolState = 'waiting' | 'running' | 'done' | 'failed' | 'denied' | 'stopped' | 'no-result';

/** The verb of a call in each state: "Asks to run", "Running", "Ran", "Did not run". */
interface Verbs {
  readonly ask: string;
  readonly active: string;
  readonly done: string;
  readonly refused: string;
}

export interface ToolTitle {
  /** "Ran", "Edited", "Asked a helper:". */
  readonly verb: string;
  /** What it acted on: a command, a path, a pattern (shown as code), or words. */
  readonly subject?: string;
  readonly subjectIsCode: boolean;
  /** The whole subject when `subject` is shortened (a long command, a path), for a tooltip. */
  readonly subjectTitle?: string;
  /** Words after the subject: "in src", "(+12 −3)", "(3 files)". */
  readonly detail?: string;
}

export interface ToolDisplay extends ToolTitle {
  readonly kind: ToolKind;
}

const verbs = (ask: string, active: string, done: string, refused: string): Verbs => ({ ask, active, done, refused });

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** A command's first line, cut to what fits on one line. */
export function shortCommand(command: string, max = 72): string {
  const lines = command.trim().split('\n');
  const first = lines[0] ?? '';
  const cut = first.length > max ? `${first.slice(0, max - 1)}…` : first;
  return lines.length > 1 && cut === first ? `${cut} …` : cut;
}

/**
 * A path as a person reads it: relative to the bot's workspace when it is inside one (claude-scuba
 * gives each thread `…/workspaces/<thread>/`), else the last three parts of a long absolute path.
 */
export function shortPath(path: string): string {
  const workspace = /\/workspaces\/[^/]+\/(.+)$/.exec(path);
  if (workspace) return workspace[1]!;
  const parts = path.split('/').filter((p) => p !== '');
  return path.startsWith('/') && parts.length > 3 ? `…/${parts.slice(-3).join('/')}` : path;
}

function host(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname === '/' ? '' : parsed.pathname;
    return shortCommand(`${parsed.host}${path}`, 60);
  } catch {
    return shortCommand(url, 60);
  }
}

const counted = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The diff an Edit, MultiEdit or Write makes, from its input alone. */
export function editDiff(toolName: string, input: unknown): LineDiff | null {
  const i = record(input);
  if (toolName === 'Write' && typeof i.content === 'string') return allAdded(i.content);
  if (toolName === 'Edit' && typeof i.new_string === 'string')
    return lineDiff(typeof i.old_string === 'string' ? i.old_string : '', i.new_string);
  if (toolName === 'MultiEdit' && Array.isArray(i.edits)) {
    const diffs = i.edits.map((e) => {
      const edit = record(e);
      return lineDiff(String(edit.old_string ?? ''), String(edit.new_string ?? ''));
    });
    return {
      lines: diffs.flatMap((d) => d.lines),
      added: diffs.reduce((n, d) => n + d.added, 0),
      removed: diffs.reduce((n, d) => n + d.removed, 0),
    };
  }
  return null;
}

/** "+12 −3" (a real minus sign, as GitHub writes it). */
export const diffStat = (diff: LineDiff): string => `+${diff.added} −${diff.removed}`;

function pick(state: ToolState, v: Verbs): string {
  switch (state) {
    case 'waiting':
      return v.ask;
    case 'running':
      return v.active;
    case 'denied':
      return v.refused;
    case 'done':
    case 'failed':
    case 'stopped':
    case 'no-result':
      return v.done;
  }
}

/** A bubble MCP tool's short name (`mcp__bubble__write_artifact` → `write_artifact`), or null. */
export function bubbleTool(toolName: string): string | null {
  const match = /^mcp__bubble__(.+)$/.exec(toolName);
  return match ? match[1]! : null;
}

/**
 * The one line a call is read by: "Ran `npm test`", "Edited `src/app.ts` (+12 −3)", "Asked a
 * helper: Review the diff", "Wrote artifact plan.md (version 2)". Known tools get their own
 * words; any other tool reads "Used `name`" (an MCP tool, "Used `tool` from server").
 */
export function describeTool(toolName: string, input: unknown, state: ToolState, output?: unknown): ToolDisplay {
  const i = record(input);
  const done = state === 'done';
  const code = (
    kind: ToolKind,
    v: Verbs,
    subject: string | undefined,
    extra: { detail?: string; full?: string } = {},
  ): ToolDisplay => ({
    kind,
    verb: pick(state, v),
    ...(subject !== undefined ? { subject } : {}),
    subjectIsCode: subject !== undefined,
    ...(extra.full !== undefined && extra.full !== subject ? { subjectTitle: extra.full } : {}),
    ...(extra.detail !== undefined ? { detail: extra.detail } : {}),
  });
  const words = (kind: ToolKind, v: Verbs, subject?: string, detail?: string): ToolDisplay => ({
    kind,
    verb: pick(state, v),
    ...(subject !== undefined ? { subject } : {}),
    subjectIsCode: false,
    ...(detail !== undefined ? { detail } : {}),
  });
  const text = done ? cleanToolText(outputText(output) ?? '') : '';

  switch (toolName) {
    case 'Bash':
    case 'BashOutput': {
      const command = str(i.command) ?? str(i.bash_id) ?? '';
      return code('command', verbs('Asks to run', 'Running', 'Ran', 'Did not run'), shortCommand(command), {
        full: command,
      });
    }
    case 'Read': {
      const path = str(i.file_path) ?? '';
      const offset = typeof i.offset === 'number' ? i.offset : undefined;
      const limit = typeof i.limit === 'number' ? i.limit : undefined;
      const range =
        offset !== undefined && limit !== undefined
          ? `lines ${offset}–${offset + limit - 1}`
          : offset !== undefined
            ? `from line ${offset}`
            : undefined;
      return code('read', verbs('Asks to read', 'Reading', 'Read', 'Did not read'), shortPath(path), {
        full: path,
        ...(range ? { detail: range } : {}),
      });
    }
    case 'Edit':
    case 'MultiEdit':
    case 'Write':
    case 'NotebookEdit': {
      const path = str(i.file_path) ?? str(i.notebook_path) ?? '';
      const diff = editDiff(toolName, input);
      const v =
        toolName === 'Write'
          ? verbs('Asks to write', 'Writing', 'Wrote', 'Did not write')
          : verbs('Asks to edit', 'Editing', 'Edited', 'Did not edit');
      return code('edit', v, shortPath(path), { full: path, ...(diff ? { detail: `(${diffStat(diff)})` } : {}) });
    }
    case 'Glob': {
      const pattern = str(i.pattern) ?? '';
      const files = done ? fileCount(text) : undefined;
      return code(
        'search',
        verbs(
          'Asks to find files matching',
          'Finding files matching',
          'Found files matching',
          'Did not look for files matching',
        ),
        pattern,
        {
          detail: [str(i.path) ? `in ${shortPath(String(i.path))}` : '', files ?? ''].filter((s) => s !== '').join(' '),
        },
      );
    }
    case 'Grep': {
      const pattern = str(i.pattern) ?? '';
      const files = done ? fileCount(text) : undefined;
      return code(
        'search',
        verbs('Asks to search for', 'Searching for', 'Searched for', 'Did not search for'),
        pattern,
        {
          detail: [str(i.path) ? `in ${shortPath(String(i.path))}` : '', files ?? ''].filter((s) => s !== '').join(' '),
        },
      );
    }
    case 'WebFetch': {
      const url = str(i.url) ?? '';
      return code('web', verbs('Asks to fetch', 'Fetching', 'Fetched', 'Did not fetch'), host(url), { full: url });
    }
    case 'WebSearch':
      return words(
        'web',
        verbs(
          'Asks to search the web for',
          'Searching the web for',
          'Searched the web for',
          'Did not search the web for',
        ),
        `“${str(i.query) ?? ''}”`,
      );
    case 'Task':
    case 'Agent':
      return words(
        'helper',
        verbs('Asks a helper:', 'Asked a helper:', 'Asked a helper:', 'Did not ask a helper:'),
        str(i.description) ?? shortCommand(str(i.prompt) ?? 'a task'),
      );
    case 'TodoWrite': {
      const todos = Array.isArray(i.todos) ? i.todos.map(record) : [];
      const finished = todos.filter((t) => t.status === 'completed').length;
      return words(
        'plan',
        verbs('Asks to update the plan', 'Updating the plan', 'Updated the plan', 'Did not update the plan'),
        undefined,
        todos.length > 0 ? `(${finished} of ${todos.length} done)` : undefined,
      );
    }
    case 'AskUserQuestion': {
      const questions = Array.isArray(i.questions) ? i.questions.map(record) : [];
      const first = str(questions[0]?.question);
      return words('question', verbs('Asks', 'Asking', 'Asked', 'Did not ask'), first ? `“${first}”` : undefined);
    }
  }

  const bubble = bubbleTool(toolName);
  if (bubble !== null) {
    const result = done ? outputObject(output) : null;
    switch (bubble) {
      case 'write_artifact': {
        const version = typeof result?.version === 'number' ? `(version ${result.version})` : undefined;
        return code(
          'artifact',
          verbs('Asks to write artifact', 'Writing artifact', 'Wrote artifact', 'Did not write artifact'),
          str(i.name) ?? 'an artifact',
          version ? { detail: version } : {},
        );
      }
      case 'read_artifact':
        return code(
          'artifact',
          verbs('Asks to read artifact', 'Reading artifact', 'Read artifact', 'Did not read artifact'),
          str(i.name) ?? 'an artifact',
          typeof i.version === 'number' ? { detail: `(version ${i.version})` } : {},
        );
      case 'list_artifacts':
        return words(
          'artifact',
          verbs(
            'Asks to list the artifacts',
            'Listing the artifacts',
            'Listed the artifacts',
            'Did not list the artifacts',
          ),
          undefined,
          Array.isArray(result?.artifacts) ? `(${counted(result.artifacts.length, 'artifact')})` : undefined,
        );
      case 'browse_thread': {
        const from = typeof result?.fromSeq === 'number' ? result.fromSeq : undefined;
        const to = typeof result?.toSeq === 'number' ? result.toSeq : undefined;
        const thread = str(i.threadId);
        return words(
          'thread',
          verbs('Asks to read', 'Reading', 'Read', 'Did not read'),
          thread ? `thread ${thread}` : 'the thread',
          from !== undefined && to !== undefined ? `(#${from}–#${to})` : undefined,
        );
      }
      case 'open_subthread':
        return words(
          'thread',
          verbs('Asks to open a subthread', 'Opening a subthread', 'Opened a subthread', 'Did not open a subthread'),
          str(i.title) ? `“${String(i.title)}”` : undefined,
        );
      case 'invite_to_thread': {
        const already = result?.invited === false;
        const pending = result?.status === 'pending';
        const thread = str(i.threadId);
        const where = thread ? `to thread ${thread}` : 'to the thread';
        return {
          ...code(
            'people',
            verbs('Asks to invite', 'Inviting', 'Invited', 'Did not invite'),
            str(i.principalId) ?? '',
            {
              detail: already
                ? `(already on ${thread ? `thread ${thread}` : 'the thread'})`
                : pending
                  ? `${where} (pending: they must accept)`
                  : where,
            },
          ),
        };
      }
      case 'search_principals': {
        const found = Array.isArray(result?.principals) ? result.principals.length : undefined;
        return words(
          'people',
          verbs('Asks to look up', 'Looking up', 'Looked up', 'Did not look up'),
          str(i.query) ? `“${String(i.query)}”` : 'everyone',
          found !== undefined ? `(${counted(found, 'match', 'matches')})` : undefined,
        );
      }
    }
  }

  const mcp = /^mcp__(.+?)__(.+)$/.exec(toolName);
  if (mcp) {
    return code('tool', verbs('Asks to use', 'Using', 'Used', 'Did not use'), mcp[2]!, { detail: `from ${mcp[1]}` });
  }
  return code('tool', verbs('Asks to use', 'Using', 'Used', 'Did not use'), toolName);
}

/** "(3 files)" from a Glob's list or a Grep's "Found 3 files". */
function fileCount(text: string): string | undefined {
  if (text === '' || /^No (files|matches) found/.test(text)) return '(none found)';
  const found = /^Found (\d+) (files?|lines?|matches?)/.exec(text);
  if (found) return `(${found[1]} ${found[2]})`;
  const lines = text.split('\n').filter((l) => l.trim() !== '').length;
  return `(${counted(lines, 'file')})`;
}

/**
 * Where a call stands. An answer that counts decides denial (whatever the bot then reports); a
 * run that ended without the call's output leaves it stopped (Stop) or without a result.
 */
export function toolStateOf(call: {
  /** The tool part's state in the UI message. */
  readonly partState: string;
  /** A bot's request for this call waits for an answer. */
  readonly waiting: boolean;
  readonly decision?: 'allow' | 'deny';
  readonly runStatus: 'streaming' | 'completed' | 'interrupted' | 'error';
  /** What `toolErrorMeaning` made of the call's error text, when it failed. */
  readonly errorKind?: 'stopped' | 'refused' | 'failed';
}): ToolState {
  if (call.decision === 'deny' || call.partState === 'output-denied') return 'denied';
  if (call.partState === 'output-available') return 'done';
  if (call.partState === 'output-error') {
    if (call.errorKind === 'stopped') return 'stopped';
    if (call.errorKind === 'refused') return 'denied';
    return 'failed';
  }
  if (call.waiting) return 'waiting';
  if (call.runStatus === 'streaming') return 'running';
  return call.runStatus === 'interrupted' ? 'stopped' : 'no-result';
}
