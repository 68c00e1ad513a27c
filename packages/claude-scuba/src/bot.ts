import { dirname } from 'node:path';
import {
  buildChildEnv,
  probeSandbox,
  RunQueue,
  startLiveQuery,
  toolchainReadPaths,
  type LiveQuery,
  type LiveQueryOptions,
  type ToolIsolation,
} from '@bubble/engine';
import {
  BubbleClient,
  buildToolCatalog,
  MemoryCheckpointStore,
  SqliteCheckpointStore,
  startBotRuntime,
  type BotRuntime,
  type BotRuntimeEnd,
  type CheckpointStore,
  type ThreadContext,
} from '@bubble/sdk';
import type { Principal } from '@bubble/protocol';
import type { Logger } from 'pino';
import type { ScubaConfig } from './config/resolve-config.js';
import { ScubaError } from './errors.js';
import { makePrivateDatabase, makePrivateDir, readableByOthers, secretFileModes } from '@bubble/engine';
import { ClaudeSdkSession } from './session/claude-sdk-session.js';
import { SqliteSessionStore } from './session/session-store.js';
import { SleepingThread } from './session/sleeping-thread.js';
import { tmpRootOf } from './session/query-options.js';
import { startSpares } from './session/spare-setup.js';

/** How often, at most, the bot asks the server again who may add it to threads. */
const JOINABLE_REFRESH_MS = 30_000;

export interface BotOptions {
  config: ScubaConfig;
  logger: Logger;
  /** PATH for the CLI child (main.ts reads it from the environment). */
  childPath: string;
  /** The engine's startLiveQuery; injectable for wrappers (e.g. timing in benchmarks). */
  startQuery?: (options: LiveQueryOptions) => LiveQuery;
  /** The config file the bot was started with: out of its tools' reach like the rest of its files. */
  configPath?: string;
  /** The home folder of the bot's own user (main.ts reads it): out of its tools' reach. */
  home?: string;
}

export interface Bot {
  readonly principalId: string;
  /** Threads with a running session. */
  threads(): string[];
  session(threadId: string): ClaudeSdkSession | undefined;
  /** Stops every session (each closes its CLI) and the runtime. */
  stop(): Promise<void>;
  /** Settles when the runtime ends (stopped, or failed: e.g. the bot's token was revoked). */
  readonly done: Promise<BotRuntimeEnd>;
}

/**
 * Boots the bot (seed: "The boot sequence"): whoami must match
 * `bubble.principalId` before anything else happens; then the sdk runtime
 * follows the grants stream and runs one ClaudeSdkSession per joined thread.
 */
export async function startBot(options: BotOptions): Promise<Bot> {
  const { config, logger } = options;
  const principalId = config.bubble.principalId;
  const client = new BubbleClient({
    url: config.bubble.url,
    token: config.bubble.token.reveal(),
    logger: logger.child({ component: 'bubble-client' }),
    // A boot with thousands of threads queues its reads instead of opening thousands of sockets.
    maxConcurrentRequests: 16,
  });
  const me = await client.whoami();
  if (me.principalId !== principalId) {
    client.close();
    throw new ScubaError(
      'principal_mismatch',
      `the Bubble token authenticates principal "${me.principalId}", but bubble.principalId in the config is "${principalId}"; refusing to start`,
    );
  }
  logger.info({ principalId, url: config.bubble.url }, 'authenticated');
  const botOwners: ReadonlySet<string> = new Set(me.ownerPrincipalIds ?? []);
  let joinableBy = me.joinableBy ?? 'owners';
  // The owners' names, for the words of a denial on a thread none of them is on.
  const ownerNames = new Map<string, string>();
  for (const owner of botOwners) {
    const principal = await client.getPrincipal(owner).catch(() => undefined);
    if (principal) ownerNames.set(owner, principal.displayName);
  }
  for (const warning of readableByOthers(secretFileModes(options.configPath, secretFilesOf(config))))
    logger.warn(warning);
  const isolation = await planIsolation(options);
  if (isolation.kind === 'off')
    logger.warn(
      "claude.sandbox is false: tool commands run unsandboxed, as this process's user, with its files and its network in reach",
    );
  else if (isolation.kind === 'unavailable')
    logger.error(
      { reason: isolation.reason },
      `Claude Code's sandbox cannot start (${isolation.reason}): the bot runs no tools rather than run them unsandboxed`,
    );
  else logger.info({ privatePaths: isolation.privatePaths }, "tools run in Claude Code's sandbox");
  // An owner may change who may add the bot while it runs: read it again as new threads arrive, at most
  // every 30 s (a boot that starts many threads asks once, not once per thread).
  let lastRefresh = Date.now();
  let refreshing: Promise<void> | undefined;
  const refreshJoinableBy = (): Promise<void> => {
    if (refreshing !== undefined || Date.now() - lastRefresh < JOINABLE_REFRESH_MS)
      return refreshing ?? Promise.resolve();
    refreshing = client
      .whoami()
      .then(
        (now) => {
          if (now.joinableBy !== undefined && now.joinableBy !== joinableBy) {
            logger.info({ joinableBy: now.joinableBy }, 'who may add me to threads changed');
            joinableBy = now.joinableBy;
          }
        },
        (error: unknown) =>
          logger.warn({ err: error }, 'could not read who may add me to threads; keeping what I knew'),
      )
      .finally(() => {
        lastRefresh = Date.now();
        refreshing = undefined;
      });
    return refreshing;
  };
  if (joinableBy === 'owners')
    logger.info(
      { owners: [...botOwners] },
      'only my owners may add me to threads: I work only where one of them is a participant',
    );
  const catalog = await buildToolCatalog(client);
  logger.info(
    { tools: catalog.tools.map((t) => t.name), artifacts: catalog.extensions.artifacts },
    'local bubble tools',
  );

  const credential = config.claude.credential;
  // Its folders are its user's alone, and so is the state database (created 0600 before SQLite opens it).
  makePrivateDir(config.claude.configDir);
  makePrivateDir(config.claude.workspaceRoot);
  makePrivateDir(tmpRootOf(config));
  makePrivateDatabase(config.store.path);
  const childEnv = buildChildEnv({
    path: options.childPath,
    configDir: config.claude.configDir,
    credential:
      credential.kind === 'oauth'
        ? { kind: 'oauth', token: credential.token.reveal() }
        : { kind: 'api_key', key: credential.key.reveal() },
    baseUrl: config.claude.baseUrl,
    maxRetries: config.claude.maxRetries,
  });
  const checkpoints: CheckpointStore =
    config.store.path === ':memory:'
      ? new MemoryCheckpointStore()
      : new SqliteCheckpointStore({ path: config.store.path, scope: principalId });
  const store = new SqliteSessionStore({ path: config.store.path, scope: principalId });
  const runQueue = new RunQueue({ size: config.limits.maxActiveQueries });
  const spares = startSpares({ config, childEnv, isolation, tools: { catalog, client }, runQueue, logger });
  /** Sessions in memory (awake threads); a joined thread with nothing under way has none. */
  const sessions = new Map<string, ClaudeSdkSession>();
  const threads = new Map<string, SleepingThread>();
  // Every run this process has open, on any thread: a session starting on a thread closes only runs not in it.
  const liveRuns = new Set<string>();

  /** A sub-agent is done: unless someone is talking with the bot there, its subthread's session ends. */
  const releaseSubthread = (childThreadId: string, attempt: number): void => {
    const child = sessions.get(childThreadId);
    if (child && !child.quiet) {
      logger.info({ threadId: childThreadId }, 'sub-agent ended, but its subthread is busy: still following it');
      return;
    }
    if (!child && runtime.threads().includes(childThreadId) && threads.get(childThreadId)?.asleep !== true) {
      // Its session is still starting (it may be reading what someone wrote there): look again shortly.
      if (attempt < 10) {
        setTimeout(() => releaseSubthread(childThreadId, attempt + 1), 500).unref();
        return;
      }
      // Not released regardless: the wake may be for a person's words there (a slow one is most likely retrying
      // against a server that is away), and cut off, they would go unanswered.
      logger.info(
        { threadId: childThreadId, waitedMs: attempt * 500 },
        "sub-agent ended, but its subthread's session is still starting: still following it",
      );
      return;
    }
    store.markReleased(childThreadId);
    void runtime.release(childThreadId);
  };

  const runtime: BotRuntime = startBotRuntime({
    client,
    principalId,
    checkpoints,
    backlog: config.backlog,
    logger,
    isReleased: (threadId) => store.isReleased(threadId),
    handlerFactory: async (context) => {
      const thread = new SleepingThread({
        threadId: context.threadId,
        selfId: principalId,
        store,
        settle: (seq) => context.settle(seq),
        // From the checkpoint (or the replay start, when lower), and a page before it: the bot-only streak
        // counts turns since the last person's words, which may be older than the checkpoint.
        firstScanAfter: Math.min(context.checkpoint ?? context.startAfterSeq, context.startAfterSeq),
        idleMs: config.limits.idleStateSeconds * 1000,
        logger,
        awake: (session) => sessions.set(context.threadId, session),
        asleep: (session) => {
          if (sessions.get(context.threadId) === session) sessions.delete(context.threadId);
        },
        wake: (scanAfter) => wakeSession(context, scanAfter),
      });
      threads.set(context.threadId, thread);
      await thread.start();
      return {
        onEvent: (event) => thread.onEvent(event),
        stop: async (reason) => {
          if (threads.get(context.threadId) === thread) threads.delete(context.threadId);
          await thread.stop(reason);
        },
      };
    },
  });

  /** A thread's session, made when something happens there (see `SleepingThread`). */
  const principals = principalCache((id) => client.getPrincipal(id));
  const wakeSession = async (context: ThreadContext, scanAfter: number): Promise<ClaudeSdkSession> => {
    await refreshJoinableBy();
    const session = new ClaudeSdkSession({
      threadId: context.threadId,
      selfId: principalId,
      config,
      client: {
        appendEvents: (threadId, events) => client.appendEvents(threadId, events),
        listParticipants: (threadId) => client.listParticipants(threadId),
        getPrincipal: principals,
        createSubthread: (parent, input) => client.createSubthread(parent, input),
        getThread: (id) => client.getThread(id),
        readEvents: (threadId, input) => client.readEvents(threadId, input),
      },
      subthreadEnded: (childThreadId) => releaseSubthread(childThreadId, 0),
      scanAfter,
      liveRuns,
      runQueue,
      store,
      startQuery: options.startQuery ?? startLiveQuery,
      childEnv,
      spares,
      logger,
      settle: (seq) => context.settle(seq),
      tools: { catalog, client },
      botOwners,
      ownerNames,
      joinableBy: () => joinableBy,
      isolation,
      routeInterrupt: (runId, by, reason, seq, from) => {
        for (const other of sessions.values())
          if (other !== from && other.interruptChildRun(runId, by, reason, seq)) return;
      },
      evictIdle: (requester) => {
        // Least recently used idle query of another thread gives up its CLI slot.
        const victim = [...sessions.values()]
          .filter((s) => s !== requester && s.evictable)
          .sort((a, b) => a.lastActiveAt - b.lastActiveAt)[0];
        if (victim) {
          victim.closeIdleQuery(`slot wanted by ${requester.threadId}`);
          return true;
        }
        // Else a thread whose CLI only waits on a person gives its slot up until the answer comes.
        const waiting = [...sessions.values()]
          .filter((s) => s !== requester && s.yieldable)
          .sort((a, b) => a.lastActiveAt - b.lastActiveAt)[0];
        waiting?.yieldSlot(`slot wanted by ${requester.threadId}`);
        return waiting !== undefined;
      },
    });
    await session.init();
    if (!session.admitted) {
      logger.warn(
        { threadId: context.threadId },
        'granted a thread where none of my owners is, and only they may add me: ignoring it until one of them joins',
      );
    }
    return session;
  };

  const done = runtime.done.finally(async () => {
    await spares?.stop();
    client.close();
    store.close();
  });

  return {
    principalId,
    threads: () => runtime.threads(),
    session: (threadId) => sessions.get(threadId),
    stop: async () => {
      await runtime.stop();
      await done;
    },
    done,
  };
}

/**
 * The isolation every query of this bot runs with: the sandbox, with every
 * file of the bot out of its tools' reach (the config, its secrets, the state
 * database, the CLI's home with every thread's transcript, every workspace
 * but the thread's own, the user's home); or, where the sandbox cannot start,
 * no tools; or the owner's explicit opt-out.
 */
async function planIsolation(options: BotOptions): Promise<ToolIsolation> {
  const { config } = options;
  if (!config.claude.sandbox) return { kind: 'off' };
  const probe = await probeSandbox(options.childPath);
  if (!probe.ok) return { kind: 'unavailable', reason: probe.reason };
  const secrets = secretFilesOf(config);
  const store =
    config.store.path === ':memory:'
      ? []
      : ['', '-wal', '-shm', '-journal'].map((suffix) => `${config.store.path}${suffix}`);
  const privatePaths = [
    config.claude.workspaceRoot,
    config.claude.configDir,
    tmpRootOf(config),
    ...store,
    ...secrets,
    // The config's folder, not only the file: it is where an owner keeps the bot's other secrets (.env files, tokens).
    ...(options.configPath !== undefined ? [dirname(options.configPath)] : []),
    ...(options.home !== undefined ? [options.home] : []),
    ...config.claude.privatePaths,
  ];
  // Commands read only what is opened: the system folders (the engine's own list), the toolchains and the owner's.
  const readPaths = [...toolchainReadPaths(options.childPath, process.execPath), ...config.claude.readPaths];
  return { kind: 'sandbox', privatePaths, readPaths };
}

/** The files the config reads its secrets from (`{"file": …}`). */
function secretFilesOf(config: ScubaConfig): string[] {
  return [
    config.bubble.token,
    config.claude.credential.kind === 'oauth' ? config.claude.credential.token : config.claude.credential.key,
  ]
    .map((secret) => secret.source)
    .filter((source) => source.startsWith('file:'))
    .map((source) => source.slice('file:'.length));
}

/** How long a principal read for a thread's names serves other threads waking up. */
const PRINCIPAL_TTL_MS = 60_000;

/**
 * Principals as sessions read them (names, kinds), shared for a minute: threads waking together
 * (a boot, a burst) mostly have the same people, and each would read them again. A failed read
 * is not kept.
 */
function principalCache(read: (id: string) => Promise<Principal>): (id: string) => Promise<Principal> {
  const cache = new Map<string, { at: number; principal: Promise<Principal> }>();
  return (id) => {
    const hit = cache.get(id);
    if (hit !== undefined && Date.now() - hit.at < PRINCIPAL_TTL_MS) return hit.principal;
    if (cache.size >= 10_000) cache.clear();
    const principal = read(id);
    cache.set(id, { at: Date.now(), principal });
    principal.catch(() => {
      if (cache.get(id)?.principal === principal) cache.delete(id);
    });
    return principal;
  };
}
