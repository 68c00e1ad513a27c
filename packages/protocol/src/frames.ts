import { z } from 'zod';
import { ErrorObjectSchema } from './errors.js';
import { EventEnvelopeSchema } from './events.js';
import { SeqSchema, ThreadIdSchema } from './ids.js';
import { LIMITS } from './limits.js';
import { PrincipalSchema } from './principal.js';
import { GrantSchema } from './thread.js';

/** A subscription id, chosen by the client, unique on its socket while the subscription lives. */
export const SubscriptionIdSchema = z.string().min(1).max(200);

// Client to server.
export const ClientAuthFrameSchema = z.object({ type: z.literal('client.auth'), token: z.string().min(1) });
export const SubscribeFrameSchema = z.object({
  type: z.literal('subscribe'),
  id: SubscriptionIdSchema,
  threadId: ThreadIdSchema,
  afterSeq: SeqSchema.default(0),
});
/** One subscription of a `subscribe_batch`: the fields of a `subscribe` frame, without its type. */
export const SubscribeBatchEntrySchema = SubscribeFrameSchema.omit({ type: true });
/**
 * Many `subscribe`s in one frame (1 to `LIMITS.maxSubscribeBatch`), answered as that many
 * `subscribe` frames sent in that order would be, each by its own `id`. It is how a client with
 * many threads opens them without spending a frame of its rate budget on each (a batch of n
 * counts as ⌈n/10⌉ frames). The server reads the entries one by one, so a malformed entry is
 * refused alone; this schema is the frame as clients send it.
 */
export const SubscribeBatchFrameSchema = z.object({
  type: z.literal('subscribe_batch'),
  subscriptions: z.array(SubscribeBatchEntrySchema).min(1).max(LIMITS.maxSubscribeBatch),
});
export const SubscribeGrantsFrameSchema = z.object({ type: z.literal('subscribe_grants'), id: SubscriptionIdSchema });
export const UnsubscribeFrameSchema = z.object({ type: z.literal('unsubscribe'), id: SubscriptionIdSchema });
export const PingFrameSchema = z.object({ type: z.literal('ping') });

/**
 * Every frame a client may send. Clients type what they send by `ClientFrame` (the sdk's live
 * connection sends nothing else), and the server parses what it receives by this schema.
 */
export const ClientFrameSchema = z.discriminatedUnion('type', [
  ClientAuthFrameSchema,
  SubscribeFrameSchema,
  SubscribeBatchFrameSchema,
  SubscribeGrantsFrameSchema,
  UnsubscribeFrameSchema,
  PingFrameSchema,
]);
export type ClientFrame = z.infer<typeof ClientFrameSchema>;
export type ClientAuthFrame = z.infer<typeof ClientAuthFrameSchema>;
export type SubscribeFrame = z.infer<typeof SubscribeFrameSchema>;
export type SubscribeBatchEntry = z.infer<typeof SubscribeBatchEntrySchema>;
export type SubscribeBatchFrame = z.infer<typeof SubscribeBatchFrameSchema>;
export type SubscribeGrantsFrame = z.infer<typeof SubscribeGrantsFrameSchema>;
export type UnsubscribeFrame = z.infer<typeof UnsubscribeFrameSchema>;
export type PingFrame = z.infer<typeof PingFrameSchema>;
export type ClientFrameType = ClientFrame['type'];
export const CLIENT_FRAME_TYPES = ClientFrameSchema.options.map((option) => option.shape.type.value);

// Server to client.
export const ServerReadyFrameSchema = z.object({ type: z.literal('server.ready'), principal: PrincipalSchema });
export const SubscribedFrameSchema = z.object({
  type: z.literal('subscribed'),
  id: SubscriptionIdSchema,
  headSeq: SeqSchema,
});
export const EventFrameSchema = z.object({
  type: z.literal('event'),
  id: SubscriptionIdSchema,
  event: EventEnvelopeSchema,
});
export const GrantChangeSchema = z.enum(['added', 'revoked']);
export const GrantFrameSchema = z.object({
  type: z.literal('grant'),
  id: SubscriptionIdSchema,
  change: GrantChangeSchema,
  grant: GrantSchema,
});
export const GrantsSyncedFrameSchema = z.object({ type: z.literal('grants_synced'), id: SubscriptionIdSchema });
export const SubscriptionEndedFrameSchema = z.object({
  type: z.literal('subscription_ended'),
  id: SubscriptionIdSchema,
  reason: z.string(),
});
export const ErrorFrameSchema = z.object({
  type: z.literal('error'),
  id: z.string().optional(),
  error: ErrorObjectSchema,
});
export const PongFrameSchema = z.object({ type: z.literal('pong') });
/**
 * On a thread subscription: a participant of that thread (a principal with a live grant on it)
 * came online (its first authenticated WebSocket) or went offline (its last one closed).
 */
export const PresenceFrameSchema = z.object({
  type: z.literal('presence'),
  id: SubscriptionIdSchema,
  principalId: z.string().min(1),
  online: z.boolean(),
});

/** Every frame the server sends; clients parse what they receive by this schema (leniently: an unknown type is skipped). */
export const ServerFrameSchema = z.discriminatedUnion('type', [
  ServerReadyFrameSchema,
  SubscribedFrameSchema,
  EventFrameSchema,
  GrantFrameSchema,
  GrantsSyncedFrameSchema,
  SubscriptionEndedFrameSchema,
  ErrorFrameSchema,
  PongFrameSchema,
  PresenceFrameSchema,
]);
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
export type ServerReadyFrame = z.infer<typeof ServerReadyFrameSchema>;
export type SubscribedFrame = z.infer<typeof SubscribedFrameSchema>;
export type EventFrame = z.infer<typeof EventFrameSchema>;
export type GrantFrame = z.infer<typeof GrantFrameSchema>;
export type GrantsSyncedFrame = z.infer<typeof GrantsSyncedFrameSchema>;
export type SubscriptionEndedFrame = z.infer<typeof SubscriptionEndedFrameSchema>;
export type ErrorFrame = z.infer<typeof ErrorFrameSchema>;
export type PongFrame = z.infer<typeof PongFrameSchema>;
export type PresenceFrame = z.infer<typeof PresenceFrameSchema>;
export type ServerFrameType = ServerFrame['type'];
export type GrantChange = z.infer<typeof GrantChangeSchema>;

/** Reasons the server gives in `subscription_ended`. */
export const SUBSCRIPTION_END_REASONS = Object.freeze({
  grantRevoked: 'grant_revoked',
  threadDeleted: 'thread_deleted',
});
