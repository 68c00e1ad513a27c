import { join } from 'node:path';
import type { CanUseTool, Options } from '@anthropic-ai/claude-agent-sdk';
import type {
  LiveQuery,
  LiveQueryEnd,
  LiveQueryOptions,
  NarrowedSdkMessage,
  Release,
  RunQueue,
  SpareEngine,
  SpareServed,
  ToolIsolation,
} from '@bubble/engine';
import type { Logger } from 'pino';
import type { ScubaConfig } from '../config/resolve-config.js';
import { makePrivateDir } from '@bubble/engine';
import { buildClaimPlan, buildQueryOptions, tmpRootOf } from './query-options.js';
import type { SessionStore, ThreadSessionRecord } from './session-store.js';
import type { SpareBinding } from './spare-setup.js';

export interface ThreadQueryOptions {
  threadId: string;
  config: ScubaConfig;
  store: SessionStore;
  runQueue: RunQueue;
  /** The engine's startLiveQuery. */
  startQuery: (options: LiveQueryOptions) => LiveQuery;
  /** The CLI child's environment, built once by the bot. */
  childEnv: Record<string, string>;
  isolation: ToolIsolation;
  canUseTool: CanUseTool;
  /** A fresh MCP server set for each new query; undefined for none. */
  mcpServers: () => Options['mcpServers'] | undefined;
  /** The bot's spare CLIs, and what one calls once this thread claims it (none: every query starts a CLI). */
  spares?: { engine: SpareEngine<SpareBinding>; binding: SpareBinding } | undefined;
  logger: Logger;
  /** Every CLI slot is taken: asks the bot to free one (another thread's idle query). Whether it did. */
  freeSlot: () => boolean;
  /** The query waits in line for a CLI slot, at `position` (1 = next). */
  waitsForSlot: (position: number, slots: number) => void;
  /** A new CLI is about to speak (its cost count starts again). */
  opened: () => void;
  /** Each message of a query, in order; the next waits for this one. A query set aside has none. */
  message: (query: LiveQuery, message: NarrowedSdkMessage) => Promise<void>;
  /** A query ended, after its last message; its slot is free again. */
  ended: (query: LiveQuery, end: LiveQueryEnd) => void;
}

/**
 * One thread's Claude query: at most one at a time, opened when a turn needs
 * it (waiting for a CLI slot of the bot's RunQueue first), read to its end,
 * and closed when it is idle or its slot is wanted. Closing it never loses the
 * conversation: the next query resumes the stored Claude session id.
 */
export class ThreadQuery {
  readonly #options: ThreadQueryOptions;
  readonly #log: Logger;
  #query: LiveQuery | undefined;
  #opening: Promise<LiveQuery> | undefined;
  #opened = 0;
  /** The RunQueue slot of each query, released when it closes (idempotent). */
  readonly #slots = new WeakMap<LiveQuery, Release>();
  /** Queries closed while they waited on a person (their slot went to another thread). */
  readonly #setAside = new WeakSet<LiveQuery>();
  #workspace: string | undefined;
  /** The Claude session id of this thread is in the store (a transcript exists to resume). */
  #sessionStored = false;

  constructor(options: ThreadQueryOptions) {
    this.#options = options;
    this.#log = options.logger;
  }

  /** The query, until it has been read to its end (its CLI may have ended already). */
  get current(): LiveQuery | undefined {
    return this.#query;
  }

  /** The query, while its CLI runs. */
  get live(): LiveQuery | undefined {
    return this.#query && !this.#query.isEnded ? this.#query : undefined;
  }

  /** Where the thread's tools work (fixed the first time the thread gets a query). */
  get workspaceDir(): string {
    return this.#workspace ?? join(this.#options.config.claude.workspaceRoot, safeDirName(this.#options.threadId));
  }

  /** Another thread waits for a CLI slot. */
  get othersWaiting(): boolean {
    return this.#options.runQueue.snapshot().waiting.length > 0;
  }

  /** The live query, or a new one (which may wait for a CLI slot). Concurrent calls share one opening. */
  async ensure(): Promise<LiveQuery> {
    const live = this.live;
    if (live) return live;
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  /** Closes the query and frees its slot (it resumes by session id next time). */
  close(): void {
    const query = this.#query;
    this.#query = undefined;
    if (!query) return;
    query.close();
    this.#slots.get(query)?.();
  }

  /** Closes the query while its turn waits on a person: what its CLI says on the way out is not shown. */
  setAside(): void {
    if (this.#query) this.#setAside.add(this.#query);
    this.close();
  }

  /** Stores the query's Claude session id, once: only when a transcript exists is it worth resuming. */
  storeSessionId(query: LiveQuery): void {
    if (this.#sessionStored || !query.sessionId) return;
    this.#options.store.setClaudeSession(this.#options.threadId, query.sessionId);
    this.#sessionStored = true;
  }

  /** The stored session is gone (the CLI does not know it): the next query starts a new one. */
  forgetSessionId(): void {
    this.#options.store.setClaudeSession(this.#options.threadId, null);
  }

  async #open(): Promise<LiveQuery> {
    const { runQueue, threadId, store } = this.#options;
    this.#opened += 1;
    const id = `${threadId}#${this.#opened}`;
    // A cold turn (no session to resume: a spare cannot resume one) takes a spare CLI, and its slot with it.
    if (!store.get(threadId)?.claudeSessionId) {
      const served = this.#fromSpare(id);
      if (served) return this.#started(await served);
    }
    if (runQueue.snapshot().running.length >= runQueue.size) {
      // A spare gives its slot up first (it loses nothing); else the least recently used idle thread.
      if (this.#options.spares?.engine.yieldSlot(`slot wanted by ${threadId}`))
        this.#log.info('took the slot of a spare CLI');
      else if (this.#options.freeSlot()) this.#log.info('took the CLI slot of an idle thread');
    }
    const ticket = runQueue.enqueue({ id });
    const position = ticket.position();
    // Every CLI slot is busy (threads mid-turn, or waiting on a person).
    if (position !== null && position > 0) this.#options.waitsForSlot(position, runQueue.size);
    const release = await ticket.acquired;
    let query: LiveQuery;
    try {
      query = this.#startOwn(this.#fixWorkspace());
    } catch (error) {
      release();
      throw error;
    }
    return this.#started({ query, release });
  }

  /** The spare engine serving this query, when a spare is there to take. */
  #fromSpare(id: string): Promise<SpareServed> | undefined {
    const spares = this.#options.spares;
    if (!spares) return undefined;
    const { config, threadId, isolation } = this.#options;
    return spares.engine.open({
      id,
      binding: spares.binding,
      logger: this.#log,
      plan: (spare) => {
        const record = this.#fixWorkspace();
        this.#log.info({ cwd: record.workspace, spare: true }, 'opening the Claude query');
        return buildClaimPlan({ config, threadId, cwd: record.workspace, isolation, spare: spare.options });
      },
      fallback: () => this.#startOwn(this.#fixWorkspace()),
    });
  }

  /** Fixes the thread's workspace (the first time) and reads whether a transcript exists to resume. */
  #fixWorkspace(): ThreadSessionRecord {
    const { config, threadId, store } = this.#options;
    const record = store.fixWorkspace(threadId, join(config.claude.workspaceRoot, safeDirName(threadId)));
    makePrivateDir(record.workspace);
    this.#workspace = record.workspace;
    this.#sessionStored = record.claudeSessionId !== null;
    return record;
  }

  /** A query on a CLI of its own, in a slot the caller holds. */
  #startOwn(record: ThreadSessionRecord): LiveQuery {
    const { config, threadId } = this.#options;
    // Each thread's CLI has temp files of its own (sub-agent outputs live there), so no thread's commands see another's.
    const tmp = join(tmpRootOf(config), safeDirName(threadId));
    makePrivateDir(tmp);
    const options = buildQueryOptions({
      config,
      threadId,
      cwd: record.workspace,
      env: { ...this.#options.childEnv, CLAUDE_CODE_TMPDIR: tmp, TMPDIR: tmp },
      canUseTool: this.#options.canUseTool,
      isolation: this.#options.isolation,
      ...(record.claudeSessionId ? { resume: record.claudeSessionId } : {}),
      mcpServers: this.#options.mcpServers(),
    });
    this.#log.info({ cwd: record.workspace, resume: record.claudeSessionId ?? undefined }, 'opening the Claude query');
    return this.#options.startQuery({ options, logger: this.#log });
  }

  #started({ query, release }: { query: LiveQuery; release: Release }): LiveQuery {
    this.#slots.set(query, release);
    this.#query = query;
    this.#options.opened();
    void this.#read(query);
    return query;
  }

  async #read(query: LiveQuery): Promise<void> {
    for await (const message of query.narrowed) {
      // A CLI closed to free its slot: what it says on the way out (its refused permission request) is not shown.
      if (this.#setAside.has(query)) continue;
      await this.#options.message(query, message);
    }
    const end = await query.ended;
    if (this.#query === query) this.#query = undefined;
    this.#slots.get(query)?.();
    this.#options.ended(query, end);
  }
}

/** A thread id as one directory name (ids are opaque; keep them readable but safe). */
export function safeDirName(threadId: string): string {
  return threadId.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
}
