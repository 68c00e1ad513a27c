import type { EventEnvelope } from '@bubble/protocol';
import { emptyThreadState, foldEvents, foldThread, type Participant, type ThreadState } from '@bubble/sdk/client';

/** One page of `GET /v1/threads/:id/events` (protocol.md, "Read"): ascending, with the head. */
export interface EventPage {
  readonly events: readonly EventEnvelope[];
  readonly headSeq: number;
}

/** Reads one page: `after` (ascending from there) or `before` (the `limit` just below it, ascending too). */
export type ReadEvents = (query: { after?: number; before?: number; limit: number }) => Promise<EventPage>;

/** The largest page the server gives (protocol.md: `limit` at most 1000). */
export const MAX_PAGE = 1_000;
/** The first read beyond a page that cuts a run. */
const EXPANSION_STEP = 50;

/**
 * Whether a window that starts at `events[0]` may cut a run in two: some run has events in it
 * but no `run_started`. Such a run began earlier, or is a bare-delta turn (which never has one);
 * only earlier events tell which, so the reader asks for them (bounded), as the sdk's replay
 * window does for bots. A window from seq 1 cuts nothing.
 */
export function cutsARun(events: readonly EventEnvelope[]): boolean {
  const first = events[0];
  if (first === undefined || first.seq <= 1) return false;
  const started = new Set<string>();
  const seen = new Set<string>();
  for (const event of events) {
    if (event.type !== 'run_started' && event.type !== 'message_part' && event.type !== 'run_finished') continue;
    const runId = (event.data as { runId?: unknown }).runId;
    if (typeof runId !== 'string') continue;
    const key = `${event.principalId}\u0000${runId}`;
    if (event.type === 'run_started') started.add(key);
    else if (!started.has(key)) seen.add(key);
  }
  for (const key of seen) if (!started.has(key)) return true;
  return false;
}

/**
 * Reads the events just below `before`: at least `want` of them (fewer at seq 1), then more,
 * up to `maxExpansion` extra, while the page would cut a run (`cutsARun`). Ascending.
 */
export async function readBackward(
  read: ReadEvents,
  before: number,
  want: number,
  maxExpansion: number,
  floor = 0,
): Promise<EventEnvelope[]> {
  let events: EventEnvelope[] = [];
  let next = before;
  let extra = 0;
  // Most runs are short: a cut one is usually closed by a small read, so the step starts small and doubles.
  let step = EXPANSION_STEP;
  const lowest = Math.max(1, floor + 1);
  while (next > lowest) {
    const growing = events.length >= want;
    const remaining = growing ? Math.min(step, maxExpansion - extra) : want - events.length;
    if (growing) step = Math.min(MAX_PAGE, step * 2);
    if (remaining <= 0) break;
    const limit = Math.min(MAX_PAGE, remaining, next - lowest);
    const page = await read({ before: next, limit });
    if (page.events.length === 0) break;
    const counted = events.length >= want;
    events = [...page.events, ...events];
    if (counted) extra += page.events.length;
    next = page.events[0]!.seq;
    if (events.length >= want && !cutsARun(events)) break;
  }
  return events;
}

/** Reads every event above `after`, up to the head as it is now, in pages. */
export async function readForward(read: ReadEvents, after: number, maxEvents = Number.POSITIVE_INFINITY) {
  const events: EventEnvelope[] = [];
  let last = after;
  for (;;) {
    const page = await read({ after: last, limit: Math.min(MAX_PAGE, maxEvents - events.length) });
    events.push(...page.events);
    const tail = page.events[page.events.length - 1];
    if (tail === undefined || tail.seq >= page.headSeq || events.length >= maxEvents) break;
    last = tail.seq;
  }
  return events;
}

/**
 * The part of a thread a reader holds: a contiguous run of events, newest last, and their fold.
 * Live events fold onto the state one by one (streaming stays one fold step per delta); an older
 * page is put in front and the whole window folded again, since the fold takes events in seq
 * order only. That happens once per page the reader scrolls to, never while a run streams.
 *
 * A window that does not start at seq 1 has not seen every `participant_added`: the live grants,
 * as the server lists them, stand in for what came before it (`seedParticipants`).
 */
export class EventWindow {
  #events: EventEnvelope[] = [];
  #state: ThreadState = emptyThreadState();
  #seed: Readonly<Record<string, Participant>> | undefined;

  get state(): ThreadState {
    return this.#state;
  }

  get events(): readonly EventEnvelope[] {
    return this.#events;
  }

  /** The oldest seq held (the next one above `lastSeq` when empty). */
  get firstSeq(): number {
    return this.#events[0]?.seq ?? this.#state.lastSeq + 1;
  }

  get lastSeq(): number {
    return this.#state.lastSeq;
  }

  /** Whether older events exist below the window. */
  get hasOlder(): boolean {
    return this.#events.length > 0 && this.firstSeq > 1;
  }

  /** Replaces the window with these events (contiguous, ascending). */
  reset(events: readonly EventEnvelope[], presence: ThreadState['presence'] = this.#state.presence): ThreadState {
    this.#events = [...events];
    this.#state = this.#refold(presence);
    return this.#state;
  }

  /** One more event at the top; a replayed seq changes nothing. */
  append(event: EventEnvelope): ThreadState {
    if (event.seq <= this.#state.lastSeq) return this.#state;
    this.#events.push(event);
    this.#state = foldThread(this.#state, event);
    return this.#state;
  }

  /** Older events, just below the window (those at or above its start are dropped). */
  prepend(older: readonly EventEnvelope[]): ThreadState {
    const below = older.filter((event) => event.seq < this.firstSeq);
    if (below.length === 0) return this.#state;
    this.#events = [...below, ...this.#events];
    this.#state = this.#refold(this.#state.presence);
    return this.#state;
  }

  /** A state derived from the current one without an event (presence, which refolds keep). */
  replaceState(state: ThreadState): void {
    this.#state = state;
  }

  /** The participants to start from while the window does not reach seq 1 (the server's live grants). */
  seedParticipants(participants: Readonly<Record<string, Participant>>): ThreadState {
    this.#seed = participants;
    if (!this.hasOlder) return this.#state;
    // Grants are a reading at about the head: what the window's own events say wins where they say it.
    const merged = { ...participants, ...this.#state.participants };
    if (sameParticipants(merged, this.#state.participants)) return this.#state;
    this.#state = { ...this.#state, participants: merged };
    return this.#state;
  }

  #refold(presence: ThreadState['presence']): ThreadState {
    const base = emptyThreadState();
    const start = this.hasOlder && this.#seed !== undefined ? { ...base, participants: this.#seed } : base;
    const state = foldEvents(this.#events, start);
    return { ...state, presence };
  }
}

function sameParticipants(a: Readonly<Record<string, Participant>>, b: Readonly<Record<string, Participant>>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && a[key]!.role === b[key]!.role);
}
