import { z } from 'zod';
import { ThreadIdSchema, TimestampSchema } from './ids.js';
import { GrantSchema, RoleSchema } from './thread.js';

/** The prefix of an invite's plaintext token; at least 32 random bytes (base64url) follow it. */
export const INVITE_TOKEN_PREFIX = 'bubble_invite_';

/** What `POST /v1/threads/:id/invites` assumes for a field it is not given, and the bounds it accepts. */
export const INVITE_LIMITS = Object.freeze({
  defaultExpiresInSeconds: 7 * 24 * 60 * 60,
  maxExpiresInSeconds: 365 * 24 * 60 * 60,
  defaultMaxUses: 1,
  maxMaxUses: 10_000,
});

/** An invite as listed: no secret. */
export const InviteInfoSchema = z.object({
  inviteId: z.string(),
  threadId: ThreadIdSchema,
  role: RoleSchema,
  createdBy: z.string(),
  expiresAt: TimestampSchema,
  maxUses: z.number().int().positive(),
  uses: z.number().int().nonnegative(),
});
export type InviteInfo = z.infer<typeof InviteInfoSchema>;

/** An invite as created: the plaintext `bubble_invite_…` token is returned once, and stored as a hash only. */
export const InviteSchema = InviteInfoSchema.extend({ token: z.string() });
export type Invite = z.infer<typeof InviteSchema>;

/** `POST /v1/threads/:id/invites`: every field optional (no body means all defaults). */
export const CreateInviteRequestSchema = z
  .object({
    role: RoleSchema.default('member'),
    expiresInSeconds: z
      .number()
      .int('expiresInSeconds must be a whole number')
      .min(1, 'expiresInSeconds must be at least 1')
      .max(
        INVITE_LIMITS.maxExpiresInSeconds,
        `expiresInSeconds must be at most ${INVITE_LIMITS.maxExpiresInSeconds} (365 days)`,
      )
      .default(INVITE_LIMITS.defaultExpiresInSeconds),
    maxUses: z
      .number()
      .int('maxUses must be a whole number')
      .min(1, 'maxUses must be at least 1')
      .max(INVITE_LIMITS.maxMaxUses, `maxUses must be at most ${INVITE_LIMITS.maxMaxUses}`)
      .default(INVITE_LIMITS.defaultMaxUses),
  })
  .prefault({});
export type CreateInviteRequest = z.infer<typeof CreateInviteRequestSchema>;

/** `POST /v1/invites/accept`. */
export const AcceptInviteRequestSchema = z.object({ token: z.string().min(1).max(512) });
export type AcceptInviteRequest = z.infer<typeof AcceptInviteRequestSchema>;

export const InviteResponseSchema = z.object({ invite: InviteSchema });
export const InviteListResponseSchema = z.object({ invites: z.array(InviteInfoSchema) });
export const AcceptInviteResponseSchema = z.object({ grant: GrantSchema });
