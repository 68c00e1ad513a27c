import { z } from 'zod';
import type { EventEnvelope } from '@bubble/protocol';
import { callOptions, defineTool, ToolError } from './local-tool.js';
import { renderTranscript } from './render-transcript.js';
import { threadIdInput } from './thread-scope.js';

export const BrowseThreadInputSchema = z.strictObject({
  threadId: threadIdInput(
    'The thread to read: this thread or one of its subthreads (no other); default: the thread this call comes from.',
  ),
  after: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Read the events after this seq (oldest first). Without it, the newest events are read.'),
  before: z.number().int().positive().optional().describe('Read the events just below this seq (to page back).'),
  limit: z.number().int().min(1).max(200).default(50).describe('Most events to read (1 to 200, default 50).'),
});

/** `browse_thread`: reads a page of a thread the bot can read and renders it compactly. */
export const browseThreadTool = defineTool({
  name: 'browse_thread',
  description:
    'Read events of this Bubble thread or one of its subthreads (this one by default), rendered as compact transcript lines "#seq who: text". ' +
    'Without after/before you get the newest events; page back with before=<fromSeq>, forward with after=<toSeq>.',
  inputSchema: BrowseThreadInputSchema,
  async handler(input, context) {
    const threadId = input.threadId ?? context.threadId;
    const options = callOptions(context);
    if (input.after !== undefined && input.before !== undefined) {
      throw new ToolError('invalid_input', 'give either after or before, not both');
    }
    let page: { events: EventEnvelope[]; headSeq: number };
    if (input.after !== undefined) {
      page = await context.client.readEvents(threadId, { after: input.after, limit: input.limit }, options);
    } else {
      const before = input.before ?? (await context.client.getThread(threadId, options)).headSeq + 1;
      page = await context.client.readEvents(threadId, { before, limit: input.limit }, options);
    }
    const first = page.events[0];
    const last = page.events[page.events.length - 1];
    return {
      threadId,
      headSeq: page.headSeq,
      fromSeq: first?.seq ?? null,
      toSeq: last?.seq ?? null,
      olderAvailable: first !== undefined && first.seq > 1,
      newerAvailable: last !== undefined ? last.seq < page.headSeq : false,
      transcript: renderTranscript(page.events),
    };
  },
});
