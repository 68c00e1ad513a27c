import type { Logger } from 'pino';
import { createLiveBus, IN_PROCESS_WATCH, type LiveBus } from '../live/live-bus.js';
import type { ClusterFeed, ClusterHint, OutboxEntry, PresenceFeed } from '../store/cluster-feed.js';
import type { BubbleStore } from '../store/store.js';
import { startClusterListener } from './cluster-listener.js';
import { failureLog } from './failure-log.js';
import { startOutboxPruner } from './outbox-pruner.js';
import { OutboxReader } from './outbox-reader.js';
import { OwnMessages } from './own-messages.js';
import { ThreadSequencers } from './thread-sequencer.js';

export interface ClusterOptions {
  /**
   * How often the outbox (grants, revoked credentials, renamed principals) is read when no
   * notification says it moved; the longest a lost notification delays a revocation. Default 250 ms.
   */
  outboxPollMs?: number;
  /** How often the heads of the threads this instance serves are re-read, for lost notifications. Default 2,000 ms. */
  headsRecheckMs?: number;
  /** How often the LISTEN connection is proved alive. Default 5,000 ms. */
  listenerHealthCheckMs?: number;
  /**
   * Outbox entries older than this are deleted (`outbox-pruner.ts`). An instance that could not
   * read the outbox for longer re-checks revocations and grants from the tables instead. Default
   * 600,000 ms (10 min): thousands of times what a live reader needs.
   */
  outboxRetentionMs?: number;
  /**
   * This instance's clock (ms since the epoch), default `Date.now`: what the outbox reader times
   * itself by (holes, `outboxReadStartedAt`). Pruning and re-checks go by the database's clock.
   */
  now?: () => number;
}

export const OUTBOX_RETENTION_MS = 600_000;

/**
 * How far before `since` (when the newest entry it had read was written, by the database's clock)
 * a reader that fell behind the pruning re-checks: the times in the tables it compares are written
 * by each writing instance's own clock when its job ran, so this covers a writer's clock behind
 * the database's and transactions that took a while to commit.
 */
const RECHECK_BEFORE_MS = 300_000;

/** What the bus reads from a store shared by several instances. */
export type ClusterStore = ClusterFeed & Pick<BubbleStore, 'readEventsAfter'>;

/** Whether the store is shared with other instances (PostgreSQL) and offers the feed they follow each other by. */
export function isClusterStore(store: BubbleStore): store is BubbleStore & ClusterFeed & PresenceFeed {
  const feed = store as Partial<ClusterFeed & PresenceFeed>;
  return (
    typeof feed.readOutboxAfter === 'function' &&
    typeof feed.registerInstance === 'function' &&
    typeof feed.outboxHead === 'function' &&
    typeof feed.threadHeads === 'function' &&
    typeof feed.connectionString === 'string'
  );
}

export interface ClusterBus extends LiveBus {
  /**
   * From now on this instance also publishes what the other instances commit to `store`: events
   * of the threads it serves, read from the database when a notification (or a periodic re-read
   * of the heads) says they are there, and every outbox entry. Before `join` the bus is the
   * in-process bus.
   */
  join(store: ClusterStore, options?: ClusterOptions): Promise<void>;
  /** Stops following the other instances (the bus goes on in-process). */
  close(): Promise<void>;
  /**
   * When the last read of the outbox that reached its end started (ms since the epoch): every
   * revocation committed by any instance before then has been published here. Null before `join`.
   */
  outboxReadStartedAt(): number | null;
}

interface ClusterLink {
  sequencers: ThreadSequencers;
  own: OwnMessages;
  outbox: OutboxReader;
  close(): Promise<void>;
}

/**
 * The live bus of a server. On its own it is the in-process bus; joined to a shared store it
 * stands between the store's commits and the bus's listeners:
 *
 * - `events` published by this instance's commits go through the per-thread sequencer
 *   (`thread-sequencer.ts`), which also takes other instances' commits from the database and
 *   publishes both in seq order with no gap and no duplicate;
 * - every other message published here is delivered at once (a revocation made here acts before
 *   the request that made it is answered), and only once although it is also read back from the
 *   outbox with the other instances' entries (`own-messages.ts`);
 * - the outbox is read every `outboxPollMs` and when a notification says it moved
 *   (`outbox-reader.ts`); the LISTEN connection reconnects with backoff and each reconnection
 *   re-reads the served heads and the outbox (`cluster-listener.ts`);
 * - entries older than `outboxRetentionMs` are pruned (`outbox-pruner.ts`); a reader that finds
 *   entries it never read pruned publishes what the tables say changed since its last complete
 *   read (revoked tokens and JWTs, grants), through the same filter as outbox entries, and
 *   re-reads the served heads, as for an `overflow` hint.
 */
export function createClusterBus(options: { logger: Logger; onListenerError?: (error: unknown) => void }): ClusterBus {
  const local = createLiveBus(
    options.onListenerError === undefined ? {} : { onListenerError: options.onListenerError },
  );
  let link: ClusterLink | null = null;
  return {
    subscribe: (listener) => local.subscribe(listener),
    publish(message) {
      if (link === null) local.publish(message);
      else if (message.kind === 'events') link.sequencers.offer(message.threadId, message.events);
      // Presence names its instance, so its listener tells its own apart (published again from the outbox).
      else if (message.kind === 'presence') local.publish(message);
      else if (link.own.local(message)) local.publish(message);
    },
    watchThread: (threadId) => (link === null ? IN_PROCESS_WATCH : link.sequencers.watch(threadId)),
    async join(store, clusterOptions = {}) {
      if (link !== null) throw new Error('this bus has already joined a cluster');
      link = await joinCluster(store, local, clusterOptions, options.logger);
    },
    async close() {
      const current = link;
      link = null;
      await current?.close();
    },
    outboxReadStartedAt: () => link?.outbox.lastCompleteReadStartedAt ?? null,
  };
}

async function joinCluster(
  store: ClusterStore,
  local: LiveBus,
  options: ClusterOptions,
  logger: Logger,
): Promise<ClusterLink> {
  const own = new OwnMessages();
  const readFailures = failureLog(logger, 'reading events another instance committed failed; retrying');
  const sequencers = new ThreadSequencers({
    source: {
      readEventsAfter: (threadId, afterSeq, limit) => store.readEventsAfter(threadId, afterSeq, limit),
      threadHeads: (threadIds) => store.threadHeads(threadIds),
    },
    publish: (threadId, events) => local.publish({ kind: 'events', threadId, events }),
    onReadError: (error, threadId) => readFailures(error, { threadId }),
  });
  const recheckFailures = failureLog(logger, 're-reading the heads of served threads failed');
  let rechecking = false;
  const recheck = async (): Promise<void> => {
    if (rechecking) return;
    rechecking = true;
    try {
      await sequencers.recheck();
    } catch (error) {
      recheckFailures(error);
    } finally {
      rechecking = false;
    }
  };
  let outbox: OutboxReader | null = null;
  const onHint = (hint: ClusterHint): void => {
    for (const { threadId, headSeq } of hint.heads) sequencers.hint(threadId, headSeq);
    if (hint.overflow === true) {
      void recheck();
      outbox?.wake();
    } else if (hint.outbox !== undefined) outbox?.wake(hint.outbox);
  };
  // LISTEN first, then the outbox cursor: whatever commits in between is both notified and read.
  const listener = await startClusterListener({
    connectionString: store.connectionString,
    logger,
    onHint,
    onListening: () => {
      void recheck();
      void outbox?.read();
    },
    healthCheckMs: options.listenerHealthCheckMs,
  });
  const deliver = (message: OutboxEntry['message']): void => {
    if (message.kind === 'presence' || own.outbox(message)) local.publish(message);
  };
  try {
    outbox = await OutboxReader.start({
      feed: store,
      pollMs: options.outboxPollMs ?? 250,
      now: options.now,
      deliver: (entry) => deliver(entry.message),
      onOverflow: async (since) => {
        void recheck();
        const changes = await store.recentChanges(new Date(Date.parse(since) - RECHECK_BEFORE_MS).toISOString());
        for (const message of changes) deliver(message);
        logger.warn(
          { since, republished: changes.length },
          'outbox entries this instance never read were pruned (it could not read the outbox for that long); ' +
            'published again what the tables say changed since then',
        );
      },
      onError: failureLog(logger, 'reading the cluster outbox failed; retrying'),
    });
  } catch (error) {
    await listener.close();
    throw error;
  }
  const reader = outbox;
  const recheckTimer = setInterval(() => void recheck(), options.headsRecheckMs ?? 2_000);
  recheckTimer.unref();
  const pruner = startOutboxPruner({
    feed: store,
    retentionMs: options.outboxRetentionMs ?? OUTBOX_RETENTION_MS,
    onError: failureLog(logger, 'pruning the cluster outbox failed; retrying later'),
  });
  return {
    sequencers,
    own,
    outbox: reader,
    async close() {
      clearInterval(recheckTimer);
      pruner.stop();
      reader.stop();
      sequencers.close();
      await listener.close();
    },
  };
}
