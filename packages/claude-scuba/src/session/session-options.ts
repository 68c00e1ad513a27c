import type { LiveQuery, LiveQueryOptions, RunQueue, SpareEngine, ToolIsolation } from '@bubble/engine';
import type { EventEnvelope, JoinableBy, Role, Thread } from '@bubble/protocol';
import type { ToolCatalog, ToolClient } from '@bubble/sdk';
import type { Logger } from 'pino';
import type { ScubaConfig } from '../config/resolve-config.js';
import type { Clock } from '../translate/delta-coalescer.js';
import type { AppendFn } from './outbound.js';
import type { SessionStore } from './session-store.js';
import type { SpareBinding } from './spare-setup.js';

/** What a session needs of Bubble (the sdk's BubbleClient has all of it). */
export interface SessionClient {
  appendEvents: AppendFn;
  listParticipants(threadId: string): Promise<Array<{ principalId: string; role: Role }>>;
  getPrincipal(
    principalId: string,
  ): Promise<{ principalId: string; kind: string; displayName?: string | null | undefined }>;
  createSubthread(
    parentThreadId: string,
    input: { title?: string | null; key?: string },
  ): Promise<{ thread: { threadId: string } }>;
  getThread(threadId: string): Promise<Pick<Thread, 'threadId' | 'parentThreadId'>>;
  readEvents(threadId: string, input: { after: number; limit: number }): Promise<{ events: EventEnvelope[] }>;
}

/** A session as the bot's callbacks see the one calling them: which thread, and its identity for `!==`. */
export interface SessionRef {
  readonly threadId: string;
}

export interface SessionOptions {
  threadId: string;
  selfId: string;
  config: ScubaConfig;
  client: SessionClient;
  runQueue: RunQueue;
  store: SessionStore;
  /** The engine's startLiveQuery. */
  startQuery: (options: LiveQueryOptions) => LiveQuery;
  /** The CLI child's environment, built once by the bot. */
  childEnv: Record<string, string>;
  /** The bot's spare CLIs (`limits.spareEngines`): a cold turn takes one when it can. */
  spares?: SpareEngine<SpareBinding> | undefined;
  logger: Logger;
  /** Records that every event up to seq is handled (the sdk runtime's `settle`). */
  settle: (seq: number) => Promise<void>;
  clock?: Clock;
  /**
   * Asks the bot to close another thread's idle query when every CLI slot is
   * taken (least recently used first). Returns whether one was closed.
   */
  evictIdle?: (requester: SessionRef) => boolean;
  /** Hands an interrupt for a run this session does not own to the session that does (a sub-agent's run, asked on its subthread). */
  routeInterrupt?: (runId: string, by: string, reason: string | undefined, seq: number, from: SessionRef) => void;
  /** The owners of the bot principal (approvers under `bot_owners` while they are on the thread). */
  botOwners: ReadonlySet<string>;
  /** Display names of the bot's owners (they may not be on the thread). */
  ownerNames?: ReadonlyMap<string, string>;
  /** Who may put the bot on threads (`whoami`, read again as grants arrive): with `owners`, the bot works only where an owner is. */
  joinableBy: () => JoinableBy;
  /** What the query's tools may reach (the bot probes the sandbox once at boot). */
  isolation: ToolIsolation;
  /** The local `bubble` tools (sdk catalog) and the client they call Bubble with. */
  tools?: { catalog: ToolCatalog; client: ToolClient };
  /**
   * Where `init` starts reading the thread to learn what the bot already answered and
   * which of its runs a crash left open (the settlement checkpoint, or the replay start
   * when that is lower). Default: the whole thread.
   */
  scanAfter?: number;
  /** Runs this process has open, on every thread: a run in it is live, not left over from a crash. */
  liveRuns?: Set<string>;
  /** A sub-agent of this session ended: its subthread's session may end too (once its last events are sent). */
  subthreadEnded?: (childThreadId: string) => void;
}
