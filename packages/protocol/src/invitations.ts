import { z } from 'zod';
import { PrincipalIdSchema, ThreadIdSchema, TimestampSchema } from './ids.js';
import { GrantSchema, RoleSchema } from './thread.js';

/** How long a pending invitation waits for its person, and how many one person may have (protocol.md, Consent). */
export const INVITATION_LIMITS = Object.freeze({
  expiresAfterSeconds: 30 * 24 * 60 * 60,
  maxPendingPerPrincipal: 100,
});

/**
 * What `POST /v1/threads/:id/participants` answers (202) for anyone the caller cannot see, or an id
 * that does not exist: the same bytes either way, so nothing about the id is disclosed.
 */
export const PendingInvitationResponseSchema = z.strictObject({
  invitation: z.strictObject({
    threadId: ThreadIdSchema,
    principalId: PrincipalIdSchema,
    status: z.literal('pending'),
  }),
});
export type PendingInvitationResponse = z.infer<typeof PendingInvitationResponseSchema>;

/** A pending invitation as its invitee lists it (`GET /v1/invitations`). */
export const InvitationSchema = z.object({
  threadId: ThreadIdSchema,
  title: z.string().nullable(),
  invitedBy: z.string(),
  role: RoleSchema,
  createdAt: TimestampSchema,
});
export type Invitation = z.infer<typeof InvitationSchema>;

export const InvitationListResponseSchema = z.object({ invitations: z.array(InvitationSchema) });
export const AcceptInvitationResponseSchema = z.object({ grant: GrantSchema });
