import { z } from 'zod';
import { callOptions, defineTool } from './local-tool.js';

export const SearchPrincipalsInputSchema = z.strictObject({
  query: z
    .string()
    .max(200)
    .default('')
    .describe('Part of a principal id or display name; empty lists every principal you can see.'),
  limit: z.number().int().min(1).max(50).default(20).describe('Most results (1 to 50, default 20).'),
});

/** `search_principals`: the principals visible to the bot whose id or display name matches. */
export const searchPrincipalsTool = defineTool({
  name: 'search_principals',
  description: 'Find people and bots you can see on Bubble (by id or display name), e.g. to invite one to a thread.',
  inputSchema: SearchPrincipalsInputSchema,
  async handler(input, context) {
    const principals = await context.client.searchPrincipals(
      { query: input.query, limit: input.limit },
      callOptions(context),
    );
    return {
      principals: principals.map((principal) => ({
        principalId: principal.principalId,
        kind: principal.kind,
        displayName: principal.displayName,
      })),
    };
  },
});
