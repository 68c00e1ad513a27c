/**
 * What an approval card says about a call (issue 28, item 6): which thread it touches and its
 * input exactly as the bot sent it, so nobody approves a call on another thread, or one whose
 * tail the summary hid.
 */

/** A field that names a thread, as the bots' local tools declare them (`threadId`, `parentThreadId`). */
const THREAD_FIELD = /threadid$/i;

/**
 * The thread a call acts on: the one its input names (`threadId` for `invite_to_thread`,
 * `browse_thread` and the artifact tools, `parentThreadId` for `open_subthread`), else the
 * thread the call runs in.
 */
export function touchedThreadId(input: unknown, callThreadId: string): string {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    for (const [field, named] of Object.entries(input))
      if (THREAD_FIELD.test(field) && typeof named === 'string' && named !== '') return named;
  }
  return callThreadId;
}

/** The input as the bot sent it, whole: JSON with two-space indents, a bare string as it is, nothing cut. */
export function exactInput(input: unknown): string {
  if (input === undefined) return '(no input)';
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    return String(input);
  }
}
