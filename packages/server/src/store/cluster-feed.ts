import type { LiveBusMessage } from '../live/live-bus.js';

/**
 * What a store shared by several server instances (PostgreSQL) offers so that each instance
 * learns of the others' commits. The database is the only source of truth: a notification is a
 * hint that something is there to read, never the thing itself, so a lost one delays but never
 * loses a change.
 *
 * - Events: every group commit sends one notification on {@link CLUSTER_CHANNEL}, delivered at
 *   commit, whose payload is a {@link ClusterHint}: the new head of each thread it appended to.
 *   An instance that learns of a head it has not published reads the missing events with
 *   `readEventsAfter`.
 * - Everything else the bus carries (grants, revoked tokens and JWTs, principal updates) is
 *   written to an outbox table in the same transaction as the change, and read by every instance
 *   in id order from {@link ClusterFeed.readOutboxAfter}. The same notification says the outbox
 *   moved (`outbox`), and instances also poll it, so a lost notification cannot keep a revoked
 *   token alive. Old entries are pruned; an instance that could not read for that long re-checks
 *   with {@link ClusterFeed.recentChanges} what it missed.
 */
export interface ClusterFeed {
  /** The id of the newest outbox entry (0 when empty). */
  outboxHead(): Promise<number>;
  /** The database's clock now (ISO), the one that stamps outbox entries. */
  databaseNow(): Promise<string>;
  /** Outbox entries with `id > cursor`, ascending, at most `limit`. */
  readOutboxAfter(cursor: number, limit: number): Promise<OutboxEntry[]>;
  /** The id of the oldest outbox entry still kept (0 when empty): whatever was below it is gone (pruned). */
  outboxTail(): Promise<number>;
  /**
   * Deletes up to `limit` of the oldest entries, written more than `olderThanMs` ago (by the
   * database's clock, so an instance whose own runs fast prunes nothing early); answers how many. What goes is a prefix in id order (so `outboxTail` tells a reader what
   * it can no longer read), never the newest entry, and nothing while another instance is pruning.
   */
  pruneOutbox(olderThanMs: number, limit: number): Promise<number>;
  /**
   * What the outbox said since `sinceIso`, rebuilt from the tables, for a reader that finds entries
   * it never read pruned: the tokens revoked since (per principal), JWTs ended since, grants made
   * or revoked since (each as its row is now), oldest first. Renames and presence are not rebuilt
   * (presence is re-read every few seconds anyway).
   */
  recentChanges(sinceIso: string): Promise<Array<OutboxEntry['message']>>;
  /** The current head seq of each of these threads (threads that do not exist are left out). */
  threadHeads(threadIds: readonly string[]): Promise<Map<string, number>>;
  /** The connection string the store was opened with, for a LISTEN connection of its own. */
  readonly connectionString: string;
}

/**
 * Who holds a WebSocket on which instance, for several instances on one database. Each instance
 * registers itself with a heartbeat (the database's clock, so the instances' clocks never matter)
 * and keeps one row per principal with at least one authenticated socket on it; every change of
 * those rows is announced in the outbox (`presence` messages) in the same transaction. An
 * instance whose heartbeat stops (kill -9, a partition) is left out of `readPresence` once it is
 * older than the reader asks, and its rows are swept later.
 */
export interface PresenceFeed {
  /** Registers (or registers again) an instance, its heartbeat now. */
  registerInstance(instanceId: string): Promise<void>;
  /** Moves the instance's heartbeat to now; false when its row is gone (swept): register again. */
  heartbeatInstance(instanceId: string): Promise<boolean>;
  /** A principal's first socket on the instance (`online`) or its last one closed; announced in the outbox. */
  putPresence(instanceId: string, principalId: string, online: boolean): Promise<void>;
  /** Makes the instance's rows exactly `principalIds`, announcing each row added or removed. */
  replacePresence(instanceId: string, principalIds: readonly string[]): Promise<void>;
  /** The rows of instances whose heartbeat is younger than `freshWithinMs`, in one snapshot. */
  readPresence(freshWithinMs: number): Promise<Array<{ instanceId: string; principalId: string }>>;
  /** The instance stops: its rows go (each announced as offline), then its registration. */
  removeInstance(instanceId: string): Promise<void>;
  /** Deletes instances silent for longer than `silentForMs`, and every row of an instance not registered. */
  sweepInstances(silentForMs: number): Promise<void>;
}

export interface OutboxEntry {
  id: number;
  /** When it was written (ISO), by the database's clock: the same for every instance, whatever theirs say. */
  createdAt: string;
  /** Never `kind: 'events'`: events travel as hints and are read from the event log. */
  message: Exclude<LiveBusMessage, { kind: 'events' }>;
}

/** The PostgreSQL notification channel every instance LISTENs on. */
export const CLUSTER_CHANNEL = 'bubble_cluster';

/** The JSON payload of one notification on {@link CLUSTER_CHANNEL} (kept well under PostgreSQL's 8,000 bytes). */
export interface ClusterHint {
  /** Threads appended to by this commit, with their head seq after it. */
  heads: { threadId: string; headSeq: number }[];
  /** Present when the commit wrote to the outbox: the newest outbox id it wrote. */
  outbox?: number;
  /**
   * True when the heads would not fit in one payload: `heads` is then empty, and each listener
   * re-checks the heads of every thread it serves with `threadHeads`.
   */
  overflow?: true;
}
