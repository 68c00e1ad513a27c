/**
 * What a tool's output says to a person, without what Claude Code wrote into it for the model:
 * `<system-reminder>` blocks, the sub-agent hand-back frame and its `agentId` / `<usage>`
 * trailer, the "internal metadata" notice of a background agent, the line-number arrows of a
 * Read. Every pattern here is copied from a real output (the recorded threads in
 * `packages/sdk/src/fold/__fixtures__` and `packages/claude-scuba/src/translate/__fixtures__`).
 */

/** The text of an output that is text: a string, or MCP content blocks that are all text. Else null. */
export function outputText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'text')
  ) {
    return value.map((v) => String((v as { text?: unknown }).text ?? '')).join('\n');
  }
  return null;
}

/** An output's JSON object: a bubble MCP tool answers with `JSON.stringify(result)` as its one text block. */
export function outputObject(value: unknown): Record<string, unknown> | null {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  const text = outputText(value);
  if (text === null || !text.trimStart().startsWith('{')) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const REMINDER = /<system-reminder>[\s\S]*?(<\/system-reminder>|$)/g;
/** Claude Code's stand-in for an empty result. */
const NO_OUTPUT = /^\((Bash completed with no output|No content)\)$/;

/** The text without the CLI's reminders to the model, and without trailing blank lines. */
export function cleanToolText(text: string): string {
  const cleaned = text.replace(REMINDER, '').replace(/\s+$/, '');
  return NO_OUTPUT.test(cleaned.trim()) ? '' : cleaned.replace(/^\n+/, '');
}

export interface HelperReport {
  /** What the sub-agent reported, as it wrote it (markdown), or '' while it works in the background. */
  readonly report: string;
  readonly background: boolean;
}

const HANDBACK_FRAME = /^\[Subagent hand-back\][^\n]*$/m;

/**
 * A sub-agent's (Task / Agent) result as a person reads it: the report alone. Claude Code frames
 * it ("[Subagent hand-back] … The report follows:"), indents every line of it by two spaces, and
 * appends `agentId:` and a `<usage>` block; a background agent answers with a notice marked as
 * internal metadata instead.
 */
export function helperReport(text: string): HelperReport {
  if (/^Async agent launched successfully/.test(text.trimStart())) return { report: '', background: true };
  let body = text.replace(/<tools-used-before-summary>[\s\S]*?<\/tools-used-before-summary>/g, '');
  const frame = HANDBACK_FRAME.exec(body);
  if (frame !== null) body = body.slice(frame.index + frame[0].length);
  body = body
    .replace(/<usage>[\s\S]*?(<\/usage>|$)/g, '')
    .replace(/^agentId: \S+.*$/gm, '')
    .replace(REMINDER, '');
  const lines = body.split('\n');
  // The harness indents the report by two spaces; only undo it where every line has them.
  const indented = lines.filter((l) => l.trim() !== '').every((l) => l.startsWith('  '));
  return {
    report: (indented ? lines.map((l) => l.slice(2)) : lines).join('\n').trim(),
    background: false,
  };
}

export interface NumberedLines {
  readonly first: number;
  readonly lines: readonly string[];
}

/** A Read's `cat -n` output (`     12→text`, or a tab in older CLIs) as its lines and first line number. */
export function numberedLines(text: string): NumberedLines | null {
  const rows = text.split('\n');
  if (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
  const parsed = rows.map((row) => /^\s*(\d+)(?:→|\t)(.*)$/.exec(row));
  if (parsed.length === 0 || parsed.some((m) => m === null)) return null;
  return { first: Number(parsed[0]![1]), lines: parsed.map((m) => m![2]!) };
}

/** The exit code a failed Bash call reports ("Exit code 1" on its first line). */
export function exitCode(errorText: string): number | undefined {
  const match = /^Exit code (\d+)/.exec(errorText.trimStart());
  return match ? Number(match[1]) : undefined;
}

export type ToolErrorMeaning =
  | { readonly kind: 'stopped' }
  | { readonly kind: 'refused'; readonly by?: string; readonly reason?: string }
  | { readonly kind: 'failed'; readonly text: string };

const REJECTED = "The user doesn't want to proceed with this tool use.";

/**
 * What a tool's error says: stopped while it ran (Stop pressed: claude-scuba corrects the CLI's
 * "rejected" text to say so), refused before it ran (a denial the CLI reports as an error), or a
 * real failure, with the text that explains it.
 */
export function toolErrorMeaning(errorText: string): ToolErrorMeaning {
  const text = cleanToolText(errorText);
  if (/this call was stopped while running/.test(text) || /^\[Request interrupted by user/.test(text)) {
    return { kind: 'stopped' };
  }
  if (text.startsWith(REJECTED)) return { kind: 'refused' };
  const denied = /^Denied by (\S+?)(?:: (.*)|\.)?$/s.exec(text);
  if (denied) return { kind: 'refused', by: denied[1]!, ...(denied[2] ? { reason: denied[2] } : {}) };
  return { kind: 'failed', text };
}
