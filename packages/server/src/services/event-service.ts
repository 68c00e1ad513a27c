import {
  LIMITS,
  REQUESTED_BY_EVENT_TYPES,
  SYSTEM_EVENT_TYPES,
  validateEventData,
  type EventEnvelope,
  type NewEvent,
  type Principal,
} from '@bubble/protocol';
import { forbidden, invalidRequest, payloadTooLarge } from '../errors/bubble-error.js';
import { isPlainTextDelta } from '../domain/append-fast-path.js';
import { requireReader } from '../domain/access-rules.js';
import type { AppendResult, BubbleStore, NewEventInput } from '../store/store.js';

/**
 * Checks each event of an append: a client type, valid data, data within 64 KiB, and, when an
 * author is given, that only the bot `target` itself records `requestedBy` (a person's chat command).
 */
export function checkNewEvents(events: NewEvent[], authorId?: string): NewEventInput[] {
  return events.map((event, index) => {
    if (SYSTEM_EVENT_TYPES.has(event.type)) {
      throw forbidden(`events of type ${event.type} are written by the server only`, { index, type: event.type });
    }
    if (!isPlainTextDelta(event.type, event.data)) {
      const result = validateEventData(event.type, event.data);
      if (!result.ok) throw invalidRequest(result.message, { index, issues: result.issues });
      if (authorId !== undefined && REQUESTED_BY_EVENT_TYPES.has(event.type))
        checkRequestedBy(result.data, authorId, index);
    }
    const dataJson = JSON.stringify(event.data);
    const bytes = Buffer.byteLength(dataJson, 'utf8');
    if (bytes > LIMITS.maxEventDataBytes) {
      throw payloadTooLarge(`event data is ${bytes} bytes; the limit is ${LIMITS.maxEventDataBytes}`, {
        index,
        limit: LIMITS.maxEventDataBytes,
      });
    }
    return {
      type: event.type,
      data: event.data as Record<string, unknown>,
      dataJson,
      clientEventId: event.clientEventId,
    };
  });
}

function checkRequestedBy(data: Record<string, unknown>, authorId: string, index: number): void {
  if (data.requestedBy === undefined || data.target === authorId) return;
  throw forbidden(`requestedBy may be set only by the bot ${String(data.target)} itself, recording who asked it`, {
    index,
    field: 'data.requestedBy',
  });
}

export function createEventService(store: BubbleStore) {
  return {
    /** Appends as the caller (never as anyone else); the store checks the grant and the run rules atomically. */
    append(caller: Principal, threadId: string, events: NewEvent[]): Promise<AppendResult> {
      return store.appendEvents({
        threadId,
        principalId: caller.principalId,
        events: checkNewEvents(events, caller.principalId),
      });
    },

    async read(
      caller: Principal,
      threadId: string,
      query: { after?: number | undefined; before?: number | undefined; limit: number },
    ): Promise<{ events: EventEnvelope[]; headSeq: number }> {
      requireReader(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      return query.before !== undefined
        ? store.readEventsBefore(threadId, query.before, query.limit)
        : store.readEventsAfter(threadId, query.after ?? 0, query.limit);
    },

    async putCursor(caller: Principal, threadId: string, seq: number): Promise<number> {
      const access = requireReader(
        await store.getThreadAccess(threadId, caller.principalId),
        threadId,
        caller.principalId,
      );
      if (seq > access.thread.headSeq) {
        throw invalidRequest(`seq ${seq} is beyond the thread's head seq ${access.thread.headSeq}`, {
          headSeq: access.thread.headSeq,
        });
      }
      return store.putCursor(threadId, caller.principalId, seq);
    },

    async getCursor(caller: Principal, threadId: string): Promise<number> {
      requireReader(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      return store.getCursor(threadId, caller.principalId);
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
