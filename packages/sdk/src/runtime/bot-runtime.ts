import type { Grant } from '@bubble/protocol';
import { pino, type Logger } from 'pino';
import type { CheckpointStore } from './checkpoint-store.js';
import { BacklogPolicySchema, type BacklogPolicyInput } from './replay-window.js';
import {
  ThreadRunner,
  type BotRuntimeClient,
  type BotRuntimeLive,
  type ThreadHandlerFactory,
} from './thread-runner.js';

export interface BotRuntimeOptions<C extends BotRuntimeClient = BotRuntimeClient> {
  /** The bot's client (HTTP). */
  readonly client: C;
  /** The live connection; a `BubbleClient` serves as both. Default: `client`, when it has one. */
  readonly live?: BotRuntimeLive;
  /** The bot's principal id (the grants stream is the caller's own; this labels logs and checks grants). */
  readonly principalId: string;
  readonly checkpoints: CheckpointStore;
  /** Where each thread starts reading; see `selectReplayWindow`. Defaults: since_joined, catch_up, 50. */
  readonly backlog?: BacklogPolicyInput;
  /** Makes the handler of one thread. Called once per granted thread, after the start is chosen. */
  readonly handlerFactory: ThreadHandlerFactory<C>;
  readonly logger?: Logger;
  /** Store each settled seq as the server's consumer cursor (a receipt for unread counts). Default true. */
  readonly cursorReceipts?: boolean;
  /**
   * Delete a thread's checkpoint when its grant is revoked. Default false: a later invitation
   * starts by `onFirstJoin` anyway (a checkpoint below the new `joinedSeq` is ignored), and a
   * revoke-then-add that a reconnect reports for a mere role change keeps its checkpoint.
   */
  readonly forgetOnRevoke?: boolean;
  /**
   * Threads the bot let go of (`release`) in an earlier run: their grants are not followed. Asked
   * when a grant is added.
   */
  readonly isReleased?: (threadId: string) => boolean;
  /** Backoff of a thread whose start failed transiently. Defaults 500 ms and 30 s. */
  readonly retryBaseMs?: number;
  readonly retryCapMs?: number;
  /**
   * Threads starting at once at most (reading their checkpoint, head and replay window, making
   * their handler); the others wait their turn. Default 16: a boot with 10,000 threads does not
   * send 10,000 reads at once, and what the server refuses for being too many is retried.
   */
  readonly startConcurrency?: number;
}

/** How long one listing of every thread serves as the heads of threads starting (boot). */
const LISTED_HEADS_MS = 30_000;
/** How often the boot looks whether every thread it started is followed yet. */
const BOOT_CHECK_MS = 200;

/** How the runtime ended. */
export type BotRuntimeEnd = { readonly kind: 'stopped' } | { readonly kind: 'failed'; readonly error: unknown };

export interface BotRuntime {
  readonly principalId: string;
  /** Ids of the threads running now. */
  threads(): string[];
  /**
   * Stops following one thread the bot keeps its grant on (its handler gets `stop('released')`),
   * for the rest of this runtime; the grants stream re-adding it does not start it again.
   */
  release(threadId: string): Promise<void>;
  /** Stops every thread (handlers get `stop('runtime_stopped')`) and the grants stream. */
  stop(): Promise<void>;
  /** Settles when the runtime has ended: stopped, or failed (the grants stream failed, e.g. a revoked credential). */
  readonly done: Promise<BotRuntimeEnd>;
}

/**
 * The bot runtime (seed 000's "amphibian driver"): discovers the bot's threads from its grants
 * stream, runs one handler per granted thread, stops it on revoke. Each thread starts where the
 * replay policy says (from the local checkpoint, never from the server's cursor), then follows
 * the thread live; its handler gets every event once, in order, and settles explicitly.
 */
export function startBotRuntime<C extends BotRuntimeClient>(options: BotRuntimeOptions<C>): BotRuntime {
  const logger = (options.logger ?? pino({ level: 'silent' })).child({
    principalId: options.principalId,
    component: 'bot-runtime',
  });
  const policy = BacklogPolicySchema.parse(options.backlog ?? {});
  const live = options.live ?? (options.client as unknown as Partial<BotRuntimeLive>);
  if (typeof live.subscribeGrantsAsIterable !== 'function' || typeof live.subscribeThread !== 'function') {
    throw new TypeError(
      'startBotRuntime needs a live connection: pass `live`, or a client that has subscribeThread and subscribeGrantsAsIterable',
    );
  }
  const liveConnection = live as BotRuntimeLive;
  const runners = new Map<string, ThreadRunner<C>>();
  const abort = new AbortController();
  const forgetOnRevoke = options.forgetOnRevoke ?? false;

  const startTurn = startGate(options.startConcurrency ?? 16);
  const listedHead = listedHeads(options.client, logger);
  const bootStarted = Date.now();

  const released = new Set<string>();
  const startThread = (grant: Grant): void => {
    const current = runners.get(grant.threadId);
    if (current !== undefined) return;
    if (released.has(grant.threadId) || options.isReleased?.(grant.threadId) === true) {
      logger.debug({ threadId: grant.threadId }, 'thread released earlier; not followed');
      return;
    }
    const runner = new ThreadRunner({
      grant,
      principalId: options.principalId,
      client: options.client,
      live: liveConnection,
      checkpoints: options.checkpoints,
      policy,
      handlerFactory: options.handlerFactory,
      logger,
      cursorReceipts: options.cursorReceipts ?? true,
      retryBaseMs: options.retryBaseMs ?? 500,
      retryCapMs: options.retryCapMs ?? 30_000,
      startTurn,
      listedHead,
      onEnded: (ended) => {
        // A thread that ended by itself (its subscription ended or failed for good) is no longer running.
        if (runners.get(ended.threadId) === ended) runners.delete(ended.threadId);
      },
    });
    runners.set(grant.threadId, runner);
    runner.start();
  };

  const revokeThread = async (grant: Grant): Promise<void> => {
    const runner = runners.get(grant.threadId);
    if (runner !== undefined) {
      runners.delete(grant.threadId);
      await runner.stop('revoked');
    }
    if (forgetOnRevoke) {
      await options.checkpoints
        .delete(grant.threadId)
        .catch((error: unknown) => logger.warn({ err: error, threadId: grant.threadId }, 'checkpoint not deleted'));
    }
  };

  /** Once the first sync of grants is in: says when every thread it granted is followed live. */
  const reportBoot = async (): Promise<void> => {
    const booting = [...runners.values()];
    while (!abort.signal.aborted && booting.some((runner) => !runner.following && !runner.ended)) {
      await new Promise((resolve) => setTimeout(resolve, BOOT_CHECK_MS).unref());
    }
    if (abort.signal.aborted) return;
    logger.info(
      { threads: booting.filter((runner) => runner.following).length, ms: Date.now() - bootStarted },
      'following every thread',
    );
  };

  const run = async (): Promise<BotRuntimeEnd> => {
    const grants = liveConnection.subscribeGrantsAsIterable({ signal: abort.signal });
    // After the grants of the first sync have been taken in order (the loop below runs first).
    void grants.whenSynced().then(() => setTimeout(() => void reportBoot(), 0));
    try {
      for await (const update of grants) {
        if (abort.signal.aborted) break;
        const { grant } = update;
        if (grant.principalId !== options.principalId) {
          logger.warn(
            { threadId: grant.threadId, grantee: grant.principalId },
            'grant of another principal on the grants stream; ignored',
          );
          continue;
        }
        if (update.change === 'added') {
          logger.info(
            { threadId: grant.threadId, role: grant.role, joinedSeq: grant.joinedSeq },
            'grant added; starting thread',
          );
          startThread(grant);
        } else {
          logger.info({ threadId: grant.threadId }, 'grant revoked; stopping thread');
          await revokeThread(grant);
        }
      }
      if (abort.signal.aborted) return { kind: 'stopped' };
      const error = new Error(`the grants stream ended (${JSON.stringify(grants.endReason ?? null)})`);
      logger.error({ err: error }, 'grants stream ended; the runtime stops');
      return { kind: 'failed', error };
    } catch (error) {
      if (abort.signal.aborted) return { kind: 'stopped' };
      logger.error({ err: error }, 'grants stream failed; the runtime stops');
      return { kind: 'failed', error };
    } finally {
      abort.abort();
      const stopping = [...runners.values()];
      runners.clear();
      await Promise.all(stopping.map((runner) => runner.stop('runtime_stopped')));
    }
  };

  const done = run();

  return {
    principalId: options.principalId,
    threads: () => [...runners.keys()],
    release: async (threadId) => {
      released.add(threadId);
      const runner = runners.get(threadId);
      if (runner === undefined) return;
      runners.delete(threadId);
      logger.info({ threadId }, 'thread released; no longer followed');
      await runner.stop('released');
    },
    stop: async () => {
      abort.abort();
      await done;
    },
    done,
  };
}

/** At most `size` holders at once; the others wait in order. */
function startGate(size: number): (signal: AbortSignal) => Promise<() => void> {
  let held = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else held -= 1;
  };
  return (signal) => {
    if (held < size) {
      held += 1;
      return Promise.resolve(once(release));
    }
    return new Promise((resolve) => {
      // A runner stopped while waiting gets a release that gives nothing back (it held nothing).
      const onAbort = () => {
        const at = waiting.indexOf(take);
        if (at !== -1) waiting.splice(at, 1);
        resolve(() => undefined);
      };
      const take = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(once(release));
      };
      if (signal.aborted) resolve(() => undefined);
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.push(take);
      }
    });
  };
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/**
 * The heads of every thread from one `GET /v1/threads`, for threads starting within 30 s of it
 * (a boot): one read instead of one per thread. Undefined where the client cannot list, the list
 * failed, or it is older.
 */
function listedHeads(client: BotRuntimeClient, logger: Logger): (threadId: string) => Promise<number | undefined> {
  let listing: Promise<Map<string, number> | undefined> | undefined;
  let listedAt = 0;
  return async (threadId) => {
    if (client.listThreads === undefined) return undefined;
    if (listing !== undefined && Date.now() - listedAt > LISTED_HEADS_MS) return undefined;
    if (listing === undefined) {
      listedAt = Date.now();
      listing = client.listThreads().then(
        (threads) => new Map(threads.map((thread) => [thread.threadId, thread.headSeq])),
        (error: unknown) => {
          logger.warn({ err: error }, 'could not list my threads; reading each thread’s head instead');
          return undefined;
        },
      );
    }
    return (await listing)?.get(threadId);
  };
}
