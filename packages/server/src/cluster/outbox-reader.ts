import type { ClusterFeed, OutboxEntry } from '../store/cluster-feed.js';

export interface OutboxReaderOptions {
  feed: Pick<ClusterFeed, 'outboxHead' | 'databaseNow' | 'readOutboxAfter' | 'outboxTail'>;
  /** Each entry once, in id order (an entry that fills a hole comes after higher ids read before it). */
  deliver(entry: OutboxEntry): void;
  /**
   * Entries this reader never read were pruned (it could not read the outbox for longer than they
   * are kept): whatever they said since `since` must be found out another way. `since` is by the
   * database's clock, never this instance's: when the newest entry this reader had read was written
   * (ISO; when it had read none, the time it started, since the outbox then held nothing it missed).
   * Called once the entries still there are delivered; the read counts as complete only when it
   * resolves, and a read after it rejects calls it again.
   */
  onOverflow(since: string): Promise<void>;
  onError(error: unknown): void;
  /** How often the outbox is read when nothing wakes the reader. */
  pollMs: number;
  now?: () => number;
}

const PAGE = 500;
/** An id below the newest read that has not shown up is waited for this long (its transaction may still commit). */
const HOLE_WAIT_MS = 30_000;
/** At most this many missing ids are waited for per gap (a sequence may jump, say after a crash). */
const MAX_HOLES_PER_GAP = 256;

/**
 * Reads the outbox from where this instance started, every `pollMs` and at once when a
 * notification says it moved (`wake`), so a lost notification costs at most one poll interval.
 *
 * Ids come from a sequence, taken when a transaction inserts, not when it commits: a transaction
 * holding id 7 can commit after the one holding id 8 was read. So an id skipped over is a hole,
 * not a loss: holes are read again on every pass until they fill or until they are old enough
 * that their transaction must have rolled back (`HOLE_WAIT_MS`; a rolled-back group commit leaves
 * them behind). That costs a re-read of the few entries after the oldest hole while one is open.
 *
 * Old entries are pruned (`outbox-pruner.ts`). A reader that finds ids missing right after its
 * cursor asks for the oldest id still kept: if that is past them, they may have been entries it
 * can no longer read, so it moves on to what is kept and tells `onOverflow` (a rolled-back id
 * there makes that a false alarm, which costs a re-check, never a miss).
 */
export class OutboxReader {
  #cursor: number;
  readonly #holes = new Map<number, number>();
  #timer: NodeJS.Timeout | null = null;
  #reading: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  /** When the entry at the cursor was written, or (before this reader read one) when it started: the database's clock. */
  #cursorWrittenAt: string;
  /** Entries were pruned before this reader read them: when the newest one it had read was written. */
  #missedSince: string | null = null;
  readonly #now: () => number;
  /** When the last read that reached the end of the outbox started (ms), or null before the first. */
  lastCompleteReadStartedAt: number | null = null;
  readonly #options: OutboxReaderOptions;

  private constructor(options: OutboxReaderOptions, cursor: number, cursorWrittenAt: string) {
    this.#options = options;
    this.#cursor = cursor;
    this.#cursorWrittenAt = cursorWrittenAt;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Starts at the outbox's head: what was committed before is not this instance's news. Ids
   * missing just below it may belong to transactions still in flight, so they start as holes.
   */
  static async start(options: OutboxReaderOptions): Promise<OutboxReader> {
    const startedAt = options.now?.() ?? Date.now();
    // Before the head: whatever a reader that has read nothing misses was written after this.
    const startedAtDatabase = await options.feed.databaseNow();
    const head = await options.feed.outboxHead();
    const floor = Math.max(0, head - MAX_HOLES_PER_GAP);
    const entries = await options.feed.readOutboxAfter(floor, PAGE);
    const present = new Set(entries.map((entry) => entry.id));
    const cursor = Math.max(head, ...present);
    const reader = new OutboxReader(options, cursor, entries.at(-1)?.createdAt ?? startedAtDatabase);
    for (let id = floor + 1; id < cursor; id += 1) if (!present.has(id)) reader.#holes.set(id, startedAt);
    reader.lastCompleteReadStartedAt = startedAt;
    reader.#timer = setInterval(() => void reader.read(), options.pollMs);
    reader.#timer.unref();
    return reader;
  }

  /** A notification said the outbox moved, to `id` when given. */
  wake(id?: number): void {
    if (id !== undefined && id <= this.#cursor && !this.#holes.has(id)) return;
    void this.read();
  }

  /** Reads what is new; a call while a read runs makes that read go round once more. Never rejects. */
  read(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#reading !== null) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = (async () => {
      try {
        do {
          this.#again = false;
          const startedAt = this.#now();
          await this.#readToEnd();
          this.lastCompleteReadStartedAt = startedAt;
        } while (this.#again && !this.#stopped);
      } catch (error) {
        // A read cut short by shutdown is no failure.
        if (!this.#stopped) this.#options.onError(error);
      } finally {
        this.#reading = null;
      }
    })();
    return this.#reading;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #readToEnd(): Promise<void> {
    let from = this.#holes.size > 0 ? Math.min(...this.#holes.keys()) - 1 : this.#cursor;
    let checkedGap = false;
    for (;;) {
      const page = await this.#options.feed.readOutboxAfter(from, PAGE);
      if (this.#stopped) return;
      for (const entry of page) {
        if (!checkedGap && entry.id > this.#cursor) {
          checkedGap = true;
          if (entry.id > this.#cursor + 1) await this.#skipPruned(entry.id);
          if (this.#stopped) return;
        }
        this.#take(entry);
      }
      const last = page[page.length - 1];
      if (last === undefined || page.length < PAGE) break;
      from = last.id;
    }
    if (this.#missedSince !== null) {
      await this.#options.onOverflow(this.#missedSince);
      this.#missedSince = null;
    }
    const cutoff = this.#now() - HOLE_WAIT_MS;
    for (const [id, since] of this.#holes) if (since < cutoff) this.#holes.delete(id);
  }

  /**
   * Ids between the cursor and `next` (the first entry read past it) are missing: holes, or
   * entries pruned before this reader got to them. Those below the oldest id still kept can never
   * be read: the cursor moves past them, and what they said is re-checked (`onOverflow`).
   */
  async #skipPruned(next: number): Promise<void> {
    const tail = await this.#options.feed.outboxTail();
    const readable = Math.min(tail, next);
    if (readable <= this.#cursor + 1) return;
    // What was pruned came after the cursor: written after the entry there, give or take the time a
    // transaction takes to commit (`onOverflow`'s caller allows for that).
    const since = this.#cursorWrittenAt;
    if (this.#missedSince === null || since < this.#missedSince) this.#missedSince = since;
    this.#cursor = readable - 1;
    for (const id of this.#holes.keys()) if (id < readable) this.#holes.delete(id);
  }

  #take(entry: OutboxEntry): void {
    if (entry.id > this.#cursor) {
      const now = this.#now();
      for (let id = Math.max(this.#cursor + 1, entry.id - MAX_HOLES_PER_GAP); id < entry.id; id += 1)
        this.#holes.set(id, now);
      this.#cursor = entry.id;
      this.#cursorWrittenAt = entry.createdAt;
    } else if (!this.#holes.delete(entry.id)) {
      return; // delivered before
    }
    this.#options.deliver(entry);
  }
}
