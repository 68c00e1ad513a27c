import type { EventEnvelope } from '@bubble/protocol';
import type { ThreadWatch } from '../live/live-bus.js';

/** What the sequencer reads: the event log, and the heads of threads. */
export interface SequencerSource {
  readEventsAfter(
    threadId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ events: EventEnvelope[]; headSeq: number }>;
  threadHeads(threadIds: readonly string[]): Promise<Map<string, number>>;
}

export interface SequencerOptions {
  source: SequencerSource;
  /** Events of one thread, ascending and contiguous, each batch starting right after the last one published. */
  publish(threadId: string, events: EventEnvelope[]): void;
  onReadError(error: unknown, threadId: string): void;
  /** The first wait after a failed read; it doubles up to `maxRetryMs`. Default 50 ms. */
  retryMs?: number;
  /** Default 2,000 ms. */
  maxRetryMs?: number;
  /** Events per store read. Default 500. */
  pageSize?: number;
  /** Local events held while a gap before them is read; past it they are dropped and read back. Default 10,000. */
  maxHeldEvents?: number;
}

/** One served thread. `published` is null until its head has been read. */
interface ThreadState {
  watchers: number;
  published: number | null;
  /** The highest seq known to exist (from local commits, hints and reads). */
  target: number;
  /** Local events above `published + 1`, ascending, waiting for the gap before them to be read. */
  held: EventEnvelope[];
  reading: boolean;
  failures: number;
  retryTimer: NodeJS.Timeout | null;
  ready: Promise<void>;
}

const THREAD_HEADS_CHUNK = 1000;

/**
 * The per-thread sequencer between the commits an instance learns of and its live bus. Events
 * reach it from two sides: this instance's own commits (`offer`, synchronously after COMMIT) and
 * hints that a thread's head moved elsewhere (`hint`: another instance's NOTIFY, or a re-read of
 * the heads). Per thread it publishes in seq order with no gap and no duplicate: an own commit
 * that lands right after the last published seq goes out at once (the one-instance fast path,
 * exactly as SQLite publishes); one that lands beyond it (another instance's seq 9 not read yet
 * when this one commits 10) is held while the gap is read from the database, then published
 * behind it. At most one read per thread is in flight; hints that arrive meanwhile only raise
 * the target, so a busy thread is read in pages rather than once per commit.
 *
 * Only served threads (`watch`ed by a live subscription) are tracked; commits of other threads
 * are passed through untouched and hints about them are ignored, so an instance reads only the
 * threads its sockets follow. A thread's cursor starts at its head as read right after the first
 * watch (the subscription reads its backlog after that, see `LiveBus.watchThread`), and is
 * forgotten when the last watch is released.
 */
export class ThreadSequencers {
  readonly #threads = new Map<string, ThreadState>();
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  readonly #pageSize: number;
  readonly #maxHeld: number;
  #closed = false;
  readonly #options: SequencerOptions;

  constructor(options: SequencerOptions) {
    this.#options = options;
    this.#retryMs = options.retryMs ?? 50;
    this.#maxRetryMs = options.maxRetryMs ?? 2_000;
    this.#pageSize = options.pageSize ?? 500;
    this.#maxHeld = options.maxHeldEvents ?? 10_000;
  }

  /** The threads served now. */
  servedThreads(): string[] {
    return [...this.#threads.keys()];
  }

  watch(threadId: string): ThreadWatch {
    let state = this.#threads.get(threadId);
    if (state === undefined) {
      const fresh: ThreadState = {
        watchers: 0,
        published: null,
        target: 0,
        held: [],
        reading: false,
        failures: 0,
        retryTimer: null,
        ready: Promise.resolve(),
      };
      this.#threads.set(threadId, fresh);
      fresh.ready = this.#start(threadId, fresh);
      // Every watcher awaits `ready`; this only keeps a rejection nobody is left to see from being reported as unhandled.
      fresh.ready.catch(() => {});
      state = fresh;
    }
    const watched = state;
    watched.watchers += 1;
    let released = false;
    return {
      ready: watched.ready,
      release: () => {
        if (released) return;
        released = true;
        watched.watchers -= 1;
        if (watched.watchers === 0 && this.#threads.get(threadId) === watched) this.#forget(threadId, watched);
      },
    };
  }

  /** Events this instance committed (one thread, ascending, contiguous), called right after COMMIT. */
  offer(threadId: string, events: EventEnvelope[]): void {
    const state = this.#threads.get(threadId);
    if (state === undefined) {
      // Nobody here follows this thread: nothing to order against.
      this.#options.publish(threadId, events);
      return;
    }
    const last = events[events.length - 1];
    if (last === undefined) return;
    if (last.seq > state.target) state.target = last.seq;
    const published = state.published;
    if (published !== null && !state.reading && state.retryTimer === null && state.held.length === 0) {
      const from = events.findIndex((event) => event.seq > published);
      if (from === -1) return;
      if ((events[from] as EventEnvelope).seq === published + 1) {
        this.#options.publish(threadId, from === 0 ? events : events.slice(from));
        state.published = last.seq;
        return;
      }
    }
    this.#hold(state, events);
    this.#pump(threadId, state);
  }

  /** The head of a thread moved to `headSeq` (a notification, or a re-read of the heads). */
  hint(threadId: string, headSeq: number): void {
    const state = this.#threads.get(threadId);
    if (state === undefined || headSeq <= state.target) return;
    state.target = headSeq;
    this.#pump(threadId, state);
  }

  /** Reads the heads of every served thread and catches up those behind (notifications may have been lost). */
  async recheck(): Promise<void> {
    const ids = [...this.#threads.entries()].filter(([, s]) => s.published !== null).map(([id]) => id);
    for (let i = 0; i < ids.length; i += THREAD_HEADS_CHUNK) {
      const heads = await this.#options.source.threadHeads(ids.slice(i, i + THREAD_HEADS_CHUNK));
      for (const [threadId, headSeq] of heads) this.hint(threadId, headSeq);
    }
  }

  /** Stops reading; what is in flight is dropped. */
  close(): void {
    this.#closed = true;
    for (const [threadId, state] of [...this.#threads]) this.#forget(threadId, state);
  }

  async #start(threadId: string, state: ThreadState): Promise<void> {
    let heads: Map<string, number>;
    try {
      heads = await this.#options.source.threadHeads([threadId]);
    } catch (error) {
      // The next watch of this thread starts afresh; the watchers waiting now are told.
      if (this.#threads.get(threadId) === state) this.#forget(threadId, state);
      throw error;
    }
    if (this.#threads.get(threadId) !== state) return;
    const head = heads.get(threadId) ?? 0;
    state.published = head;
    if (head > state.target) state.target = head;
    this.#pump(threadId, state);
  }

  #forget(threadId: string, state: ThreadState): void {
    this.#threads.delete(threadId);
    if (state.retryTimer !== null) clearTimeout(state.retryTimer);
    state.retryTimer = null;
    state.held = [];
  }

  #hold(state: ThreadState, events: readonly EventEnvelope[]): void {
    let above = state.held[state.held.length - 1]?.seq ?? state.published ?? 0;
    for (const event of events) {
      if (event.seq <= above) continue;
      state.held.push(event);
      above = event.seq;
    }
    // The held events are in the database: past the bound they are read back instead (`target` covers them).
    if (state.held.length > this.#maxHeld) state.held = [];
  }

  /** Publishes what is publishable, and starts a read when a gap remains. */
  #pump(threadId: string, state: ThreadState): void {
    if (state.published === null || state.reading || state.retryTimer !== null || this.#closed) return;
    this.#publishHeld(threadId, state);
    if (state.published < state.target || state.held.length > 0) void this.#read(threadId, state);
  }

  #publishHeld(threadId: string, state: ThreadState): void {
    let published = state.published as number;
    let from = 0;
    while (from < state.held.length && (state.held[from] as EventEnvelope).seq <= published) from += 1;
    let to = from;
    while (to < state.held.length && (state.held[to] as EventEnvelope).seq === published + 1) {
      published += 1;
      to += 1;
    }
    if (to > from) this.#options.publish(threadId, state.held.slice(from, to));
    state.published = published;
    if (to > 0) state.held = state.held.slice(to);
  }

  async #read(threadId: string, state: ThreadState): Promise<void> {
    state.reading = true;
    try {
      for (;;) {
        if (this.#threads.get(threadId) !== state) return;
        this.#publishHeld(threadId, state);
        const after = state.published as number;
        if (after >= state.target && state.held.length === 0) {
          state.failures = 0;
          return;
        }
        const page = await this.#options.source.readEventsAfter(threadId, after, this.#pageSize);
        if (this.#threads.get(threadId) !== state) return;
        if (page.headSeq > state.target) state.target = page.headSeq;
        // Another read path (none today) or an own commit may have moved the cursor meanwhile.
        const published = state.published as number;
        let from = 0;
        while (from < page.events.length && (page.events[from] as EventEnvelope).seq <= published) from += 1;
        let to = from;
        let next = published + 1;
        while (to < page.events.length && (page.events[to] as EventEnvelope).seq === next) {
          next += 1;
          to += 1;
        }
        if (to === from) {
          if (published > after) continue;
          throw new Error(`thread ${threadId}: head ${state.target} known, but nothing after seq ${after} was read`);
        }
        this.#options.publish(threadId, page.events.slice(from, to));
        state.published = next - 1;
      }
    } catch (error) {
      if (this.#threads.get(threadId) !== state) return;
      state.failures += 1;
      this.#options.onReadError(error, threadId);
      const wait = Math.min(this.#maxRetryMs, this.#retryMs * 2 ** (state.failures - 1));
      state.retryTimer = setTimeout(() => {
        state.retryTimer = null;
        this.#pump(threadId, state);
      }, wait);
      state.retryTimer.unref();
    } finally {
      state.reading = false;
    }
  }
}
