/**
 * Setup for the growth benches, run through the store on the server's own database file before
 * the server starts (`StartOptions.seed` in bench-bubble.ts): the same `appendEvents` and
 * `putGrant` the server calls, so the rows, seqs, heads and runs are exactly what it writes, only
 * without HTTP in front (1,000,000 events take about 7 s this way, and much longer as POSTs).
 */
import { newThreadId } from '../domain/ids.js';
import { checkNewEvents } from '../services/event-service.js';
import type { BubbleStore } from '../store/store.js';
import { BENCH_HUMANS, benchHumanId } from './bench-bubble.js';

/** The protocol's largest batch. */
const FILL_BATCH = 500;
/** Batches handed to the store at once: its group commit puts those of one turn in one transaction. */
const FILL_IN_FLIGHT = 8;

/** One text delta, the most common event of a real thread (a streamed reply is mostly these). */
const textDelta = (n: number) => ({
  type: 'message_part',
  data: { runId: 'fill', chunk: { type: 'text-delta', id: 't1', delta: `word ${n} ` } },
});

/**
 * A thread of the first bench human holding `events` events in all (its first is the creator's
 * `participant_added`; the rest are text deltas of one bare-delta run). Returns its id.
 */
export async function seedLongThread(store: BubbleStore, title: string, events: number): Promise<string> {
  const threadId = newThreadId();
  const owner = benchHumanId(0);
  await store.createThread({ threadId, parentThreadId: null, title, createdBy: owner, key: null });
  let written = 1;
  let inFlight: Promise<unknown>[] = [];
  while (written < events) {
    const count = Math.min(FILL_BATCH, events - written);
    const batch = Array.from({ length: count }, (_, i) => textDelta(written + i));
    inFlight.push(store.appendEvents({ threadId, principalId: owner, events: checkNewEvents(batch) }));
    written += count;
    if (inFlight.length >= FILL_IN_FLIGHT) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  return threadId;
}

/** `count` threads of the first bench human, every other bench human a member of each (so any of them may append and subscribe). */
export async function seedThreads(store: BubbleStore, title: string, count: number): Promise<string[]> {
  const owner = benchHumanId(0);
  const ids: string[] = [];
  for (let t = 0; t < count; t += 1) {
    const threadId = newThreadId();
    ids.push(threadId);
    const work: Promise<unknown>[] = [
      store.createThread({ threadId, parentThreadId: null, title: `${title} ${t}`, createdBy: owner, key: null }),
    ];
    for (let i = 1; i < BENCH_HUMANS; i += 1) {
      work.push(
        store.putGrant({ threadId, principalId: benchHumanId(i), role: 'member', by: owner, mayChangeRole: false }),
      );
    }
    await Promise.all(work);
  }
  return ids;
}
