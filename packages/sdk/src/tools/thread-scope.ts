import { z } from 'zod';
import { ThreadIdSchema } from '@bubble/protocol';

/**
 * A run's tools act on the run's thread and its subthreads only: a thread is in scope when it is
 * the run's thread or its id begins with `<run's thread>.sub-` (a subthread's id is its parent's
 * id followed by `.sub-…`, so this holds at any depth). Pure.
 */
export function threadInScope(runThreadId: string, threadId: string): boolean {
  return threadId === runThreadId || threadId.startsWith(`${runThreadId}.sub-`);
}

/** Why a thread id is refused: names the thread asked for and the ones allowed. */
export function outOfScopeMessage(runThreadId: string, threadId: string): string {
  return (
    `thread ${threadId} is not this run's thread: here the tools act only on ${runThreadId} ` +
    `and its subthreads (${runThreadId}.sub-…)`
  );
}

/** The input fields that name a thread; `runTool` checks each against the run's scope. */
const threadFields = z.registry<{ scoped: true }>();

/**
 * A tool input field naming a thread (optional; the tool's default is the calling thread).
 * Every field that names a thread must be declared with this: `toolCatalog` refuses a tool with a
 * `threadId`-like field that is not, and `runTool` refuses any value outside the run's thread.
 */
export function threadIdInput(description: string) {
  const field = ThreadIdSchema.optional().describe(description);
  threadFields.add(field, { scoped: true });
  return field;
}

/** The names of a tool's input fields declared with `threadIdInput`. */
export function threadFieldNames(schema: z.ZodObject): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => threadFields.has(field as z.ZodType))
    .map(([name]) => name);
}

/** Input field names that look like they name a thread (`threadId`, `parentThreadId`, …). */
export function looksLikeThreadField(name: string): boolean {
  return /threadids?$/i.test(name);
}

/**
 * The first thread a call would touch outside the run's scope, or undefined when every one is in
 * it: the calling thread itself (a sub-agent's subthread must be under the run's thread too) and
 * every value of a `threadIdInput` field of the parsed input. Pure.
 */
export function threadOutOfScope(
  schema: z.ZodObject,
  input: Record<string, unknown>,
  context: { runThreadId: string; threadId: string },
): string | undefined {
  const asked = [context.threadId, ...threadFieldNames(schema).map((name) => input[name])];
  return asked.find(
    (threadId): threadId is string => typeof threadId === 'string' && !threadInScope(context.runThreadId, threadId),
  );
}
