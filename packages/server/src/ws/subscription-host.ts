import type { WsDeps } from './ws-deps.js';
import type { WsHub } from './ws-hub.js';

export interface ConnectionContext {
  readonly deps: WsDeps;
  readonly hub: WsHub;
  readonly authTimeoutMs: number;
  readonly maxBufferedBytes: number;
  /** Queued bytes past which a socket's queue is written at once. */
  readonly flushThresholdBytes: number;
}

/**
 * A socket as its subscriptions see it (`connection.ts` is the one): where they write, how they
 * pace a backlog, and the bound on what they hold.
 */
export interface SubscriptionHost {
  readonly principalId: string;
  readonly context: ConnectionContext;
  /** Bytes of live events this socket's subscriptions hold while they catch up. */
  heldBytes: number;
  sendControl(text: string): void;
  /** Queues a live frame; false when the socket closed instead (4008). */
  sendLive(message: string | Buffer): boolean;
  sendPaced(text: string): void;
  needsDrain(): boolean;
  drained(): Promise<void>;
  backlogTurn<T>(step: () => Promise<T>): Promise<T>;
  track(work: Promise<void>): void;
  forgetSubscription(subscription: { readonly id: string }): void;
}
