import { z } from 'zod';
import { PrincipalIdSchema } from '@bubble/protocol';
import { callOptions, defineTool } from './local-tool.js';
import { threadIdInput } from './thread-scope.js';

/** No `role` field, and unknown fields are refused: an invitation is always `member`. */
export const InviteToThreadInputSchema = z.strictObject({
  principalId: PrincipalIdSchema.describe('Who to invite (see search_principals).'),
  threadId: threadIdInput('This thread or one of its subthreads (no other); default: the thread this call comes from.'),
});

/**
 * `invite_to_thread`: adds a principal as a `member`. A principal already in the thread is left
 * as it is (an invitation never changes an existing grant, so it cannot demote an owner either).
 */
export const inviteToThreadTool = defineTool({
  name: 'invite_to_thread',
  description:
    'Invite a person or bot to this thread (or to threadId, one of its subthreads) as a member. Someone already in the thread is left as they are.',
  inputSchema: InviteToThreadInputSchema,
  async handler(input, context) {
    const threadId = input.threadId ?? context.threadId;
    const options = callOptions(context);
    const existing = (await context.client.listParticipants(threadId, options)).find(
      (grant) => grant.principalId === input.principalId,
    );
    if (existing !== undefined) {
      return {
        threadId,
        principalId: input.principalId,
        role: existing.role,
        joinedSeq: existing.joinedSeq,
        invited: false,
      };
    }
    const { grant } = await context.client.addParticipant(threadId, input.principalId, 'member', options);
    return { threadId, principalId: grant.principalId, role: grant.role, joinedSeq: grant.joinedSeq, invited: true };
  },
});
