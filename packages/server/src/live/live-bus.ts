import type { EventEnvelope, Grant, Principal } from '@bubble/protocol';

/**
 * What the core publishes after a change is durable. The WebSocket layer
 * listens; it never reads the store to learn about changes.
 *
 * - `events`: published only after the commit, ascending seq; per thread,
 *   publish order is seq order.
 * - `grant`: a grant was added (or its role changed) or revoked.
 * - `tokens_revoked`: these tokens of this principal stopped working (also
 *   published again when a watcher finds a revocation made by another process).
 * - `jwts_revoked`: every JWT of this principal issued before `issuedBefore`
 *   (ISO time, compared with `iat`) stopped working (the operator's
 *   `principal revoke-tokens`; published again by the watcher like `tokens_revoked`).
 * - `principal_updated`: a principal's displayName or joinableBy changed.
 * - `presence`: on a database shared by several instances only, a principal's first
 *   authenticated socket on instance `instanceId` (`online`) or its last one there closing
 *   (`presence/presence-registry.ts` adds up the instances; `cluster/cluster-presence.ts` writes
 *   and reads these). One process alone never publishes it: its sockets are all it needs to know.
 */
export type LiveBusMessage =
  | { kind: 'events'; threadId: string; events: EventEnvelope[] }
  | { kind: 'grant'; change: 'added' | 'revoked'; grant: Grant }
  | { kind: 'tokens_revoked'; principalId: string; tokenIds: string[] }
  | { kind: 'jwts_revoked'; principalId: string; issuedBefore: string }
  | { kind: 'principal_updated'; principal: Principal }
  | { kind: 'presence'; instanceId: string; principalId: string; online: boolean };

export interface LiveBus {
  publish(message: LiveBusMessage): void;
  /** Returns the unsubscribe function. */
  subscribe(listener: (message: LiveBusMessage) => void): () => void;
  /**
   * Says that this process has live subscribers on the thread until `release` (one call per
   * subscription; the bus counts them). Call it, and join the thread's listeners, before the first
   * store read; read only once `ready` resolves: from then on every event committed to the thread
   * is published here, in seq order. In one process that is at once. On a database shared by
   * several instances (`cluster/cluster-bus.ts`) only served threads are read from the database,
   * and `ready` waits for the thread's head to be known; it rejects if that read fails.
   */
  watchThread(threadId: string): ThreadWatch;
}

export interface ThreadWatch {
  readonly ready: Promise<void>;
  /** Idempotent. */
  release(): void;
}

/** The watch of a bus that publishes every commit of its own process as it happens. */
export const IN_PROCESS_WATCH: ThreadWatch = Object.freeze({ ready: Promise.resolve(), release: () => {} });

/**
 * The in-process bus: synchronous delivery, in publish order, to every
 * listener. A listener that throws does not stop delivery to the others
 * (the error is handed to `onListenerError`, if given).
 * Several instances on one PostgreSQL put `cluster/cluster-bus.ts` in front of it.
 */
export function createLiveBus(options: { onListenerError?: (error: unknown) => void } = {}): LiveBus {
  const listeners = new Set<(message: LiveBusMessage) => void>();
  return {
    publish(message) {
      // Copy so a listener that unsubscribes (or subscribes) during delivery
      // does not disturb this round.
      for (const listener of [...listeners]) {
        try {
          listener(message);
        } catch (error) {
          options.onListenerError?.(error);
        }
      }
    },
    subscribe(listener) {
      // Wrap so the same function subscribed twice gets two independent subscriptions.
      const entry = (message: LiveBusMessage): void => listener(message);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    watchThread: () => IN_PROCESS_WATCH,
  };
}
