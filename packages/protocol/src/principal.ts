import { z } from 'zod';
import { displayNameSchema } from './display-name.js';
import { PrincipalIdSchema, QueryIntSchema, TimestampSchema } from './ids.js';

export const PrincipalKindSchema = z.enum(['human', 'bot']);
export type PrincipalKind = z.infer<typeof PrincipalKindSchema>;

/**
 * Who may put a bot on a thread: only its owners (the default), or any
 * participant of the thread. A bot acts and spends on its owners' behalf.
 */
export const JoinableBySchema = z.enum(['owners', 'anyone'], { error: 'joinableBy must be "owners" or "anyone"' });
export type JoinableBy = z.infer<typeof JoinableBySchema>;

export const PrincipalSchema = z.object({
  principalId: PrincipalIdSchema,
  kind: PrincipalKindSchema,
  displayName: z.string(),
  ownerPrincipalIds: z.array(z.string()),
  /** Bots only. */
  joinableBy: JoinableBySchema.optional(),
  createdAt: TimestampSchema,
});
export type Principal = z.infer<typeof PrincipalSchema>;

/** A token as listed: no secret. */
export const TokenInfoSchema = z.object({
  tokenId: z.string(),
  createdAt: TimestampSchema,
});
export type TokenInfo = z.infer<typeof TokenInfoSchema>;

/** A token as minted: the plaintext secret is returned once. */
export const TokenSchema = TokenInfoSchema.extend({ token: z.string() });
export type Token = z.infer<typeof TokenSchema>;

/**
 * A displayName as sent: stored and returned in NFC, 1 to 64 characters once trimmed, with no
 * control characters, line breaks or invisible bidi or zero-width characters (`display-name.ts`).
 */
export const DisplayNameSchema = displayNameSchema();

export const CreatePrincipalRequestSchema = z.object({
  principalId: PrincipalIdSchema,
  kind: z.literal('bot', { error: 'only bot principals can be created over the API' }),
  displayName: DisplayNameSchema.optional(),
});
export type CreatePrincipalRequest = z.infer<typeof CreatePrincipalRequestSchema>;

/** `PATCH /v1/principals/:id`: at least one field. */
export const UpdatePrincipalRequestSchema = z
  .object({ displayName: DisplayNameSchema.optional(), joinableBy: JoinableBySchema.optional() })
  .refine((body) => body.displayName !== undefined || body.joinableBy !== undefined, {
    message: 'name at least one of displayName and joinableBy',
  });
export type UpdatePrincipalRequest = z.infer<typeof UpdatePrincipalRequestSchema>;

export const CreatePrincipalResponseSchema = z.object({ principal: PrincipalSchema, token: TokenSchema });
export type CreatePrincipalResponse = z.infer<typeof CreatePrincipalResponseSchema>;

export const WhoamiResponseSchema = z.object({ principal: PrincipalSchema });
export const PrincipalResponseSchema = z.object({ principal: PrincipalSchema });
export const PrincipalListResponseSchema = z.object({ principals: z.array(PrincipalSchema) });
/** `POST /v1/principals/:id/tokens` takes no fields: no body, or a JSON object (its keys are ignored). */
export const MintTokenRequestSchema = z.object({}).optional();
export const MintTokenResponseSchema = z.object({ token: TokenSchema });
export const TokenListResponseSchema = z.object({ tokens: z.array(TokenInfoSchema) });

/**
 * One of the caller's own tokens as `GET /v1/auth/tokens` lists it: the one the request was
 * authenticated with carries `current: true` (the others carry no `current`).
 */
export const OwnTokenInfoSchema = TokenInfoSchema.extend({ current: z.boolean().optional() });
export type OwnTokenInfo = z.infer<typeof OwnTokenInfoSchema>;
export const OwnTokenListResponseSchema = z.object({ tokens: z.array(OwnTokenInfoSchema) });

export const PrincipalSearchQuerySchema = z.object({
  query: z.string().max(200).default(''),
  limit: QueryIntSchema.pipe(z.number().min(1).max(1000)).default(100),
});
export type PrincipalSearchQuery = z.infer<typeof PrincipalSearchQuerySchema>;
