/**
 * Turns what the CLI reports when a run fails (a result message, the
 * iterator's thrown error, an assistant message's `error` field, free text)
 * into one of a few kinds a bot can act on, with a message for the user.
 * Pure: the clock is passed in. Backed by `__fixtures__/engine-errors.jsonl`,
 * texts captured from the real CLI; add fixtures, never loosen a pattern.
 */

import { assertNever } from '@bubble/protocol';

export type EngineErrorKind =
  | 'auth'
  | 'rate_limit'
  | 'overloaded'
  | 'max_turns'
  | 'budget'
  | 'network'
  | 'interrupted'
  | 'session_not_found'
  | 'sandbox_unavailable'
  | 'unknown';

export interface EngineErrorClassification {
  kind: EngineErrorKind;
  /** For the user, in plain words. For auth it says to run `claude setup-token`. */
  message: string;
  /** When the limit resets (ISO 8601), when the text or headers say. */
  resetAt?: string;
  /** Whether trying the same thing again later can succeed without a human fixing something. */
  retryable: boolean;
  /** The raw text the classification was made from, for logs. */
  detail: string;
}

/** A result message, structurally (see ResultLike). */
export interface ResultInput {
  subtype?: string;
  is_error?: boolean;
  result?: string;
  errors?: string[];
  terminal_reason?: string;
  api_error_status?: number | null;
}

export interface ClassifyInput {
  result?: ResultInput;
  /** What the SDK iterator threw, or any other error. */
  error?: unknown;
  /** An assistant message's `error` field (e.g. 'authentication_failed', 'rate_limit'). */
  assistantError?: string;
  /** Any further text (e.g. the assistant's "API Error: …" text). */
  text?: string;
  /** The `rate_limit_info` of the CLI's last `rate_limit_event` (subscription limits). */
  rateLimitInfo?: { status?: string; resetsAt?: number; rateLimitType?: string };
  /** Response headers, when the caller has them (lower-case names). */
  headers?: Record<string, string>;
  /** The clock, for relative times like retry-after. Without it relative times are ignored. */
  now?: Date;
}

const AUTH_TEXT =
  /authentication_error|invalid x-api-key|invalid api key|oauth token (?:has expired|revoked)|failed to authenticate|please run \/login|invalid bearer token|not logged in/i;
const RATE_LIMIT_TEXT = /rate_limit_error|rate limit|usage limit reached|hit your (?:[\w-]+ )?limit|limit reached/i;
const OVERLOADED_TEXT = /overloaded_error|\boverloaded\b/i;
const NETWORK_TEXT =
  /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ECONNRESET|EAI_AGAIN|fetch failed|connection error|socket hang up|unable to connect|network error/i;
const SESSION_NOT_FOUND_TEXT = /no conversation found with session id/i;
/** The CLI refusing to start with `sandbox.failIfUnavailable` (engine-notes §8), or the SDK's startupFailureReason for it. */
const SANDBOX_UNAVAILABLE_TEXT = /sandbox required but unavailable|sandbox_required_unavailable/i;

const ASSISTANT_ERROR_KIND: Record<string, EngineErrorKind> = {
  authentication_failed: 'auth',
  oauth_org_not_allowed: 'auth',
  cloud_credential_error: 'auth',
  rate_limit: 'rate_limit',
  overloaded: 'overloaded',
};

export function classifyEngineError(input: ClassifyInput): EngineErrorClassification {
  const detail = collectText(input);
  const resetAt = findResetAt(detail, { headers: input.headers, now: input.now, rateLimitInfo: input.rateLimitInfo });
  const kind = classifyKind(input, detail);
  const result: EngineErrorClassification = {
    kind,
    message: userMessageFor(kind, resetAt, detail),
    retryable: RETRYABLE[kind],
    detail,
  };
  if (resetAt !== undefined && kind === 'rate_limit') result.resetAt = resetAt;
  return result;
}

function classifyKind(input: ClassifyInput, detail: string): EngineErrorKind {
  const subtype = input.result?.subtype;
  if (subtype === 'error_max_turns') return 'max_turns';
  if (subtype === 'error_max_budget_usd') return 'budget';
  const terminal = input.result?.terminal_reason;
  if (terminal === 'aborted_streaming' || terminal === 'aborted_tools') return 'interrupted';
  if (SESSION_NOT_FOUND_TEXT.test(detail)) return 'session_not_found';
  if (
    SANDBOX_UNAVAILABLE_TEXT.test(detail) ||
    (input.error as { startupFailureReason?: unknown } | undefined)?.startupFailureReason ===
      'sandbox_required_unavailable'
  ) {
    return 'sandbox_unavailable';
  }

  const fromField = input.assistantError === undefined ? undefined : ASSISTANT_ERROR_KIND[input.assistantError];
  if (fromField) return fromField;

  const status = input.result?.api_error_status ?? statusInText(detail);
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (input.rateLimitInfo?.status === 'rejected') return 'rate_limit';
  if (status === 529) return 'overloaded';

  if (AUTH_TEXT.test(detail)) return 'auth';
  if (RATE_LIMIT_TEXT.test(detail)) return 'rate_limit';
  if (OVERLOADED_TEXT.test(detail)) return 'overloaded';
  if (NETWORK_TEXT.test(detail)) return 'network';
  return 'unknown';
}

const RETRYABLE: Record<EngineErrorKind, boolean> = {
  auth: false,
  rate_limit: true,
  overloaded: true,
  max_turns: false,
  budget: false,
  network: true,
  interrupted: false,
  session_not_found: false,
  sandbox_unavailable: false,
  unknown: false,
};

function userMessageFor(kind: EngineErrorKind, resetAt: string | undefined, detail: string): string {
  switch (kind) {
    case 'auth':
      return 'Claude rejected the credential: it is invalid or has expired. Run `claude setup-token` to create a new token and give it to the bot.';
    case 'rate_limit':
      return resetAt === undefined
        ? 'Claude’s usage limit is reached. Try again later.'
        : `Claude’s usage limit is reached. It resets at ${resetAt}.`;
    case 'overloaded':
      return 'Claude is overloaded right now. Try again in a moment.';
    case 'max_turns':
      return 'The run stopped: it reached its limit of turns.';
    case 'budget':
      return 'The run stopped: it reached its cost budget.';
    case 'network':
      return 'Cannot reach the Claude API (network error). Try again in a moment.';
    case 'interrupted':
      return 'The run was interrupted.';
    case 'session_not_found':
      return 'The saved Claude session was not found, so the conversation cannot be resumed.';
    case 'sandbox_unavailable': {
      const why = firstLine(detail.replace(/^.*?sandbox required but unavailable:\s*/i, '')) || 'no details were given';
      return (
        "Claude Code refused to start: its sandbox cannot run on the bot's machine, and the bot never runs tools " +
        `unsandboxed (${why}).`
      );
    }
    case 'unknown':
      return `Claude ran into an error: ${firstLine(detail) || 'no details were given'}`;
    default:
      return assertNever(kind, 'engine error kind');
  }
}

function collectText(input: ClassifyInput): string {
  const parts: string[] = [];
  if (input.result?.result) parts.push(input.result.result);
  for (const e of input.result?.errors ?? []) parts.push(e);
  if (input.text) parts.push(input.text);
  if (input.error !== undefined) parts.push(errorText(input.error));
  return parts.join('\n');
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause === undefined ? '' : `\n${errorText(error.cause)}`;
    const rawCode = (error as { code?: unknown }).code;
    const code = typeof rawCode === 'string' ? ` (${rawCode})` : '';
    return `${error.message}${code}${cause}`;
  }
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
}

/** "API Error: 529 Overloaded…", "API Error: Request rejected (429) · …". */
function statusInText(text: string): number | undefined {
  const match = /API Error:?\s*(\d{3})\b/.exec(text) ?? /API Error:[^\n(]*\((\d{3})\)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 300 ? `${line.slice(0, 297)}…` : line.trim();
}

export interface ResetSources {
  headers?: Record<string, string> | undefined;
  now?: Date | undefined;
  rateLimitInfo?: { resetsAt?: number } | undefined;
}

/**
 * The reset time, from the most structured source available: the CLI's
 * rate_limit_event, then response headers, then the text ("resets 10:04pm
 * (UTC)", "resets Dec 2, 8:04pm (UTC)"; these need `now`).
 */
export function findResetAt(text: string, sources: ResetSources = {}): string | undefined {
  const resetsAt = sources.rateLimitInfo?.resetsAt;
  if (typeof resetsAt === 'number' && Number.isFinite(resetsAt)) return new Date(resetsAt * 1000).toISOString();
  const h = sources.headers ?? {};
  const unified = h['anthropic-ratelimit-unified-reset'];
  if (unified && /^\d{9,11}$/.test(unified)) return new Date(Number(unified) * 1000).toISOString();
  for (const name of [
    'anthropic-ratelimit-requests-reset',
    'anthropic-ratelimit-tokens-reset',
    'anthropic-ratelimit-input-tokens-reset',
  ]) {
    const value = h[name];
    if (value && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
  }
  const now = sources.now;
  const retryAfter = h['retry-after'];
  if (retryAfter && now && /^\d+$/.test(retryAfter))
    return new Date(now.getTime() + Number(retryAfter) * 1000).toISOString();

  // "Claude AI usage limit reached|1753606800": epoch seconds after a pipe (older CLIs).
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(text);
  if (epoch) return new Date(Number(epoch[1]) * 1000).toISOString();
  if (now) return resetFromClockText(text, now);
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const CLOCK_RESET = /resets (?:([A-Z][a-z]{2}) (\d{1,2}), )?(\d{1,2})(?::(\d{2}))?\s*(am|pm)\s*\(([^)]+)\)/i;

/** "resets 10:04pm (UTC)" (next such time) or "resets Dec 2, 8:04pm (UTC)", in the named time zone. */
function resetFromClockText(text: string, now: Date): string | undefined {
  const m = CLOCK_RESET.exec(text);
  if (!m) return undefined;
  const [, monthName, dayText, hourText, minuteText, ampm, zone] = m;
  if (!hourText || !ampm || !zone || !isTimeZone(zone)) return undefined;
  let hour = Number(hourText) % 12;
  if (ampm.toLowerCase() === 'pm') hour += 12;
  const minute = Number(minuteText ?? 0);
  const today = partsIn(now, zone);
  const tolerance = 60_000;
  if (monthName && dayText) {
    const month = MONTHS.indexOf(monthName.toLowerCase());
    if (month === -1) return undefined;
    for (const year of [today.year, today.year + 1]) {
      const at = zonedToUtc({ year, month, day: Number(dayText), hour, minute }, zone);
      if (at.getTime() >= now.getTime() - tolerance) return at.toISOString();
    }
    return undefined;
  }
  for (const addDays of [0, 1]) {
    const day = new Date(Date.UTC(today.year, today.month, today.day + addDays));
    const at = zonedToUtc(
      { year: day.getUTCFullYear(), month: day.getUTCMonth(), day: day.getUTCDate(), hour, minute },
      zone,
    );
    if (at.getTime() >= now.getTime() - tolerance) return at.toISOString();
  }
  return undefined;
}

interface WallTime {
  year: number;
  month: number; // 0-based
  day: number;
  hour: number;
  minute: number;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function partsIn(date: Date, zone: string): WallTime {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  }).formatToParts(date);
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { year: get('year'), month: get('month') - 1, day: get('day'), hour: get('hour'), minute: get('minute') };
}

/** The UTC instant at which the wall clock in `zone` shows `wall`. */
function zonedToUtc(wall: WallTime, zone: string): Date {
  const asUtc = Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute);
  let guess = asUtc;
  for (let i = 0; i < 2; i++) {
    const shown = partsIn(new Date(guess), zone);
    const shownUtc = Date.UTC(shown.year, shown.month, shown.day, shown.hour, shown.minute);
    guess += asUtc - shownUtc;
  }
  return new Date(guess);
}
