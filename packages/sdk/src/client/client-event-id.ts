import type { NewEvent } from '@bubble/protocol';

/**
 * A fresh idempotency key for one event. Web Crypto's `randomUUID` (a global on Node 20+ and in
 * every browser), not `node:crypto`: this module is part of what a browser bundles.
 */
export function newClientEventId(): string {
  return `ce_${globalThis.crypto.randomUUID()}`;
}

/**
 * Gives every event that has no `clientEventId` a fresh one, so that sending the same list again
 * after an uncertain failure appends nothing twice. Returns new objects; the input is untouched.
 */
export function withClientEventIds(events: readonly NewEvent[], makeId: () => string = newClientEventId): NewEvent[] {
  return events.map((event) =>
    event.clientEventId === undefined ? { ...event, clientEventId: makeId() } : { ...event },
  );
}
