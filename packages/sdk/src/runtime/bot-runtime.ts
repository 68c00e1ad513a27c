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
}

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

  const run = async (): Promise<BotRuntimeEnd> => {
    const grants = liveConnection.subscribeGrantsAsIterable({ signal: abort.signal });
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
