import type { ClusterFeed } from '../store/cluster-feed.js';

export interface OutboxPrunerOptions {
  feed: Pick<ClusterFeed, 'pruneOutbox'>;
  /** Entries older than this are deleted. */
  retentionMs: number;
  onError(error: unknown): void;
}

/** Entries per DELETE: each statement stays short, whatever has piled up. */
const BATCH = 1_000;
/** The longest wait between two prunes; shorter windows are pruned every tenth of themselves. */
const MAX_PRUNE_EVERY_MS = 60_000;

export interface OutboxPruner {
  /** Deletes what is older than the window, a batch at a time, until nothing old is left. Never rejects. */
  prune(): Promise<void>;
  stop(): void;
}

/**
 * Keeps the outbox from growing forever. Every instance runs one, off the request path (a timer,
 * every tenth of the window, at most a minute apart); the store's statement takes an advisory lock
 * if it is free, so only one instance deletes at a time and the others skip that turn. So the
 * table holds about one window of entries. A failed prune (the database unreachable) is reported
 * and tried again at the next turn.
 *
 * The window is far longer than any live reader needs (readers poll every 250 ms, and a new
 * instance starts from the head). A reader cut off for longer than the window finds the entries
 * it missed gone, and re-checks from the tables instead (`outbox-reader.ts`, `onOverflow`).
 */
export function startOutboxPruner(options: OutboxPrunerOptions): OutboxPruner {
  let stopped = false;
  let pruning: Promise<void> | null = null;
  const prune = (): Promise<void> => {
    pruning ??= (async () => {
      try {
        for (;;) {
          const deleted = await options.feed.pruneOutbox(options.retentionMs, BATCH);
          if (stopped || deleted < BATCH) break;
        }
      } catch (error) {
        if (!stopped) options.onError(error);
      } finally {
        pruning = null;
      }
    })();
    return pruning;
  };
  const timer = setInterval(() => void prune(), Math.min(MAX_PRUNE_EVERY_MS, Math.max(1, options.retentionMs / 10)));
  timer.unref();
  return {
    prune,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
