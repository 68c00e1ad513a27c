import { z } from 'zod';
import { PrincipalIdSchema } from '@bubble/protocol';
import { callOptions, defineTool, type JsonValue } from './local-tool.js';
import { threadIdInput } from './thread-scope.js';

/** No `role` field, and unknown fields are refused: an invitation is always `member`. */
export const InviteToThreadInputSchema = z.strictObject({
  principalId: PrincipalIdSchema.describe('Who to invite (see search_principals).'),
  threadId: threadIdInput('This thread or one of its subthreads (no other); default: the thread this call comes from.'),
});

/** What the tool tells the model when the server made an invitation rather than a grant. */
export const PENDING_INVITATION_NOTE =
  'invitation sent; they must accept before they are in the thread (nothing is known about them until then)';

/**
 * `invite_to_thread`: adds a principal as a `member`. A principal already in the thread is left
 * as it is (an invitation never changes an existing grant, so it cannot demote an owner either).
 * Someone the bot cannot see is not added: the server makes a pending invitation (protocol.md,
 * Consent) and answers the same for an id that does not exist, and the tool says exactly that,
 * never that the person was added.
 */
export const inviteToThreadTool = defineTool({
  name: 'invite_to_thread',
  description:
    'Invite a person or bot to this thread (or to threadId, one of its subthreads) as a member. Someone already in the thread is left as they are. ' +
    'Someone you cannot see yet only gets an invitation, which they must accept ("status": "pending").',
  inputSchema: InviteToThreadInputSchema,
  async handler(input, context): Promise<JsonValue> {
    const threadId = input.threadId ?? context.threadId;
    const options = callOptions(context);
    const existing = (await context.client.listParticipants(threadId, options)).find(
      (grant) => grant.principalId === input.principalId,
    );
    if (existing !== undefined) {
      return {
        threadId,
        principalId: input.principalId,
        status: 'already_participant',
        role: existing.role,
        joinedSeq: existing.joinedSeq,
        invited: false,
      };
    }
    const added = await context.client.addParticipant(threadId, input.principalId, 'member', options);
    if (added.status === 'pending')
      return {
        threadId,
        principalId: input.principalId,
        status: 'pending',
        invited: true,
        note: PENDING_INVITATION_NOTE,
      };
    const { grant } = added;
    return {
      threadId,
      principalId: grant.principalId,
      status: 'added',
      role: grant.role,
      joinedSeq: grant.joinedSeq,
      invited: true,
    };
  },
});
