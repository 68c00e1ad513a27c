import { z } from 'zod';
import { callOptions, defineTool } from './local-tool.js';

export const SearchPrincipalsInputSchema = z.strictObject({
  query: z
    .string()
    .max(200)
    .default('')
    .describe("Part of a participant's id or display name; empty lists every participant of this thread."),
  limit: z.number().int().min(1).max(50).default(20).describe('Most results (1 to 50, default 20).'),
});

/** The most principals asked of Bubble per search (its own cap); the run's thread's participants are kept. */
const SEARCH_WINDOW = 1000;

/**
 * `search_principals`: the participants of the run's thread whose id or display name matches.
 * Only them: a bot is never a way to find out who else exists, or who is on its other threads.
 */
export const searchPrincipalsTool = defineTool({
  name: 'search_principals',
  description: 'Find the people and bots on this thread (by id or display name), e.g. to invite one to a subthread.',
  inputSchema: SearchPrincipalsInputSchema,
  async handler(input, context) {
    const options = callOptions(context);
    const participants = new Set(
      (await context.client.listParticipants(context.runThreadId, options)).map((grant) => grant.principalId),
    );
    const principals = await context.client.searchPrincipals({ query: input.query, limit: SEARCH_WINDOW }, options);
    return {
      principals: principals
        .filter((principal) => participants.has(principal.principalId))
        .slice(0, input.limit)
        .map((principal) => ({
          principalId: principal.principalId,
          kind: principal.kind,
          displayName: principal.displayName,
        })),
    };
  },
});
