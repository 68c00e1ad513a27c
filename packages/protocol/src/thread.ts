import { z } from 'zod';
import { PrincipalIdSchema, SeqSchema, ThreadIdSchema, TimestampSchema } from './ids.js';

export const ThreadSchema = z.object({
  threadId: ThreadIdSchema,
  parentThreadId: ThreadIdSchema.nullable(),
  title: z.string().nullable(),
  createdBy: z.string(),
  createdAt: TimestampSchema,
  headSeq: SeqSchema,
});
export type Thread = z.infer<typeof ThreadSchema>;

export const RoleSchema = z.enum(['owner', 'member']);
export type Role = z.infer<typeof RoleSchema>;

export const GrantSchema = z.object({
  threadId: ThreadIdSchema,
  principalId: z.string(),
  role: RoleSchema,
  grantedBy: z.string(),
  grantedAt: TimestampSchema,
  /** The seq of the `participant_added` event that made this grant. */
  joinedSeq: SeqSchema,
  revokedAt: TimestampSchema.nullable(),
});
export type Grant = z.infer<typeof GrantSchema>;

export const TitleSchema = z.string().max(500);
/** A client-chosen idempotency key for thread creation. */
export const ThreadKeySchema = z.string().min(1).max(200);

export const CreateThreadRequestSchema = z.object({
  title: TitleSchema.nullish(),
  parentThreadId: ThreadIdSchema.nullish(),
  key: ThreadKeySchema.optional(),
});
export type CreateThreadRequest = z.infer<typeof CreateThreadRequestSchema>;

export const ThreadResponseSchema = z.object({ thread: ThreadSchema });
export const ThreadListResponseSchema = z.object({ threads: z.array(ThreadSchema) });

export const AddParticipantRequestSchema = z.object({
  principalId: PrincipalIdSchema,
  role: RoleSchema,
});
export type AddParticipantRequest = z.infer<typeof AddParticipantRequestSchema>;

export const GrantResponseSchema = z.object({ grant: GrantSchema });
export const GrantListResponseSchema = z.object({ grants: z.array(GrantSchema) });

/** A live grant as `GET /v1/threads/:id/participants` lists it: `online` while its principal holds an authenticated WebSocket. */
export const ParticipantGrantSchema = GrantSchema.extend({ online: z.boolean() });
export type ParticipantGrant = z.infer<typeof ParticipantGrantSchema>;
export const ParticipantListResponseSchema = z.object({ grants: z.array(ParticipantGrantSchema) });

export const PutCursorRequestSchema = z.object({ seq: SeqSchema });
export const CursorResponseSchema = z.object({ seq: SeqSchema });
