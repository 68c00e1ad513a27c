/**
 * What an approval card says about a call (issue 28, item 6): which thread it touches and its
 * input exactly as the bot sent it, so nobody approves a call on another thread, or one whose
 * tail the summary hid.
 */

/**
 * The thread a call acts on: the one its input names (`threadId`, as the bots' local tools
 * take it: `invite_to_thread`, `browse_thread`, the artifact tools), else the thread the call
 * runs in.
 */
export function touchedThreadId(input: unknown, callThreadId: string): string {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    const named = (input as Record<string, unknown>).threadId;
    if (typeof named === 'string' && named !== '') return named;
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
