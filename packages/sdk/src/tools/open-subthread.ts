import { createHash } from 'node:crypto';
import { z } from 'zod';
import { TitleSchema } from '@bubble/protocol';
import { callOptions, defineTool } from './local-tool.js';
import { threadIdInput } from './thread-scope.js';

/**
 * The idempotency key of a subthread opened by a tool call: a hash of the calling thread, run and
 * tool-call ids, so a retry of the same call (after a timeout, a reconnect, a restart) gets the
 * same child instead of a second one.
 */
export function subthreadKey(ids: { threadId: string; runId: string; toolCallId: string }): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([ids.threadId, ids.runId, ids.toolCallId]))
    .digest('base64url');
  return `tool-subthread-${digest.slice(0, 43)}`;
}

export const OpenSubthreadInputSchema = z.strictObject({
  title: TitleSchema.optional().describe('A title for the subthread.'),
  parentThreadId: threadIdInput(
    'The parent: this thread or one of its subthreads (no other); default: the thread this call comes from.',
  ),
});

/** `open_subthread`: creates a subthread that starts with only the bot in it. */
export const openSubthreadTool = defineTool({
  name: 'open_subthread',
  description:
    'Open a subthread of this thread (or of parentThreadId) for a side task. It starts with only you in it; invite others with invite_to_thread. ' +
    'Calling again from the same tool call returns the same subthread.',
  inputSchema: OpenSubthreadInputSchema,
  async handler(input, context) {
    const parentThreadId = input.parentThreadId ?? context.threadId;
    const key = subthreadKey({ threadId: context.threadId, runId: context.runId, toolCallId: context.toolCallId });
    const { thread, created } = await context.client.createThread(
      { parentThreadId, key, title: input.title },
      callOptions(context),
    );
    return { threadId: thread.threadId, parentThreadId: thread.parentThreadId, title: thread.title, created };
  },
});
