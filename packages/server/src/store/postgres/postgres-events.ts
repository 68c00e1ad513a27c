import type { EventEnvelope } from '@bubble/protocol';
import { conflict, forbidden, notFound } from '../../errors/bubble-error.js';
import { RUN_BOUND_TYPES, type RunState, stepRun } from '../../domain/run-rules.js';
import { isSameEvent } from '../../domain/same-event.js';
import type { AppendInput, AppendResult, BubbleStore } from '../store.js';
import { toEnvelope, type EventRow } from '../sqlite/sqlite-rows.js';
import type { AppendKeys } from './postgres-append-facts.js';
import type { PostgresStoreContext } from './postgres-context.js';
import { SQL } from './postgres-sql.js';
import type { WriteTx } from './postgres-write-tx.js';

type EventMethods = Pick<BubbleStore, 'appendEvents' | 'readEventsAfter' | 'readEventsBefore'>;

/** What an append decides on besides the head, named so its group can read it with the others'. */
function appendKeysOf(input: AppendInput): AppendKeys {
  return {
    threadId: input.threadId,
    principalId: input.principalId,
    clientEventIds: input.events.flatMap((e) => (e.clientEventId == null ? [] : [e.clientEventId])),
    runIds: [...new Set(input.events.flatMap((e) => (RUN_BOUND_TYPES.has(e.type) ? [e.data.runId as string] : [])))],
  };
}

/**
 * One append request inside a group: the same decisions as the SQLite store's, made against the
 * thread's locked head, the stored grant, events of its clientEventIds and runs (read for the
 * whole group at once, see `postgres-append-facts.ts`), and what earlier jobs of the group staged.
 * Every refusal comes before anything is written: the events go in with the group's others at commit.
 */
async function appendJob(tx: WriteTx, input: AppendInput, keys: AppendKeys): Promise<AppendResult> {
  const { threadId, principalId } = input;
  if ((await tx.head(threadId)) === null) throw notFound(`thread ${threadId} not found`);
  const facts = await tx.appendFacts(keys);
  if (!facts.granted) throw forbidden(`${principalId} holds no grant on thread ${threadId}`);
  const stored = facts.replays;
  const storedRuns = facts.runs;
  const out: EventEnvelope[] = [];
  const fresh: EventEnvelope[] = [];
  const runs = new Map<string, { state: RunState; changed: boolean }>();
  for (const [index, event] of input.events.entries()) {
    const clientEventId = event.clientEventId ?? null;
    if (clientEventId !== null) {
      const earlier = tx.stagedEvent(threadId, principalId, clientEventId) ?? stored.get(clientEventId);
      if (earlier) {
        if (!isSameEvent(earlier, event)) {
          throw conflict(`clientEventId ${clientEventId} was already used with a different type or data`, {
            index,
            clientEventId,
            seq: earlier.seq,
          });
        }
        out.push(earlier);
        continue;
      }
    }
    if (RUN_BOUND_TYPES.has(event.type)) {
      const runId = event.data.runId as string;
      const entry = runs.get(runId);
      const state = entry?.state ?? tx.stagedRun(threadId, runId) ?? storedRuns.get(runId) ?? null;
      runs.set(
        runId,
        stepRun(event.type as 'run_started' | 'message_part' | 'run_finished', runId, principalId, state, entry, index),
      );
    }
    const envelope = tx.appendEvent({
      threadId,
      principalId,
      type: event.type,
      data: event.data,
      dataJson: event.dataJson,
      clientEventId,
    });
    out.push(envelope);
    fresh.push(envelope);
  }
  if (fresh.length > 0) {
    for (const [runId, { state, changed }] of runs) if (changed) tx.stageRun(threadId, runId, state);
    tx.emit({ kind: 'events', threadId, events: fresh });
  }
  return { events: out, replay: fresh.length === 0 };
}

type PageRow = { head_seq: number } & { [K in keyof EventRow]: EventRow[K] | null };

export function eventMethods({ db, write }: PostgresStoreContext): EventMethods {
  const page = async (sql: string, threadId: string, seq: number, limit: number) => {
    const rows = await db.query<PageRow>(sql, [threadId, seq, limit]);
    if (rows.length === 0) throw notFound(`thread ${threadId} not found`);
    const events = rows.flatMap((row) => (row.seq === null ? [] : [toEnvelope(row as EventRow)]));
    return { events, headSeq: rows[0]!.head_seq };
  };
  return {
    appendEvents: (input) => {
      const keys = appendKeysOf(input);
      return write({ threads: [input.threadId], appendKeys: keys, run: (tx) => appendJob(tx, input, keys) });
    },
    readEventsAfter: (threadId, afterSeq, limit) => page(SQL.eventsAfter, threadId, afterSeq, limit),
    readEventsBefore: async (threadId, beforeSeq, limit) => {
      const result = await page(SQL.eventsBefore, threadId, beforeSeq, limit);
      return { events: result.events.reverse(), headSeq: result.headSeq };
    },
  };
}
