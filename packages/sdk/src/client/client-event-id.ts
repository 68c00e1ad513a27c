import { randomUUID } from 'node:crypto';
import type { NewEvent } from '@bubble/protocol';

/** A fresh idempotency key for one event. */
export function newClientEventId(): string {
  return `ce_${randomUUID()}`;
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
