import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  narrowSdkMessage,
  type LiveQuery,
  type LiveQueryOptions,
  type Release,
  type RunQueue,
  type ToolIsolation,
} from '@bubble/engine';
import type { EventEnvelope, JoinableBy, Role, Thread } from '@bubble/protocol';
import { formatDrainText, isBubbleApiError, type DrainPayload, type ToolCatalog, type ToolClient } from '@bubble/sdk';
import type { Logger } from 'pino';
import { BubbleToSdkDrain } from '../bridge/bubble-to-sdk.js';
import type { ScubaConfig } from '../config/resolve-config.js';
import type { Clock } from '../translate/delta-coalescer.js';
import { systemClock } from '../translate/delta-coalescer.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import { Outbound, type AppendFn } from './outbound.js';
import { buildQueryOptions, tmpRootOf } from './query-options.js';
import type { SessionStore } from './session-store.js';
import { ThreadOutput, type ThreadOutputStep } from './thread-output.js';
import { ThreadPeople } from './thread-people.js';
import { ApprovalAnnouncer } from './approval-announcer.js';
import { ThreadAdmission } from './thread-admission.js';
import { ToolGate } from './tool-gate.js';
import { ThreadLedger } from './thread-ledger.js';
import { decideTurn } from './turn-policy.js';

/** The first wait before Claude is started again after it failed; it doubles up to `limits.restartBackoffMaxSeconds`. */
const RESTART_BASE_MS = 1_000;
/** Failures in a row after which the thread is told, once, that Claude keeps failing. */
const CRASH_LOOP_TELL_AFTER = 3;
/** Pages of 1,000 events read at most when a thread starts, to learn what the bot already answered. */
const SCAN_MAX_PAGES = 20;
/** How long a held bot-only turn waits for its run_started to come back before it starts anyway. */
const HELD_TURN_MAX_MS = 5_000;

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
  logger: Logger;
  /** Records that every event up to seq is handled (the sdk runtime's `settle`). */
  settle: (seq: number) => Promise<void>;
  clock?: Clock;
  /**
   * Asks the bot to close another thread's idle query when every CLI slot is
   * taken (least recently used first). Returns whether one was closed.
   */
  evictIdle?: (requester: ClaudeSdkSession) => boolean;
  /** Hands an interrupt for a run this session does not own to the session that does (a sub-agent's run, asked on its subthread). */
  routeInterrupt?: (runId: string, by: string, reason: string | undefined, seq: number, from: ClaudeSdkSession) => void;
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

/**
 * One thread's Claude: the drain rule feeds one long-lived streaming query,
 * its output is translated onto the thread (and sub-agents' subthreads), and
 * tool approvals are parked until someone allowed answers. Event delivery is
 * never blocked on Claude: turns start asynchronously.
 */
export class ClaudeSdkSession {
  readonly threadId: string;
  readonly #o: SessionOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #people: ThreadPeople;
  readonly #drain: BubbleToSdkDrain;
  readonly #output: ThreadOutput;
  readonly #outbound: Outbound;
  readonly #tools: ToolGate;
  readonly #checkpoints: CheckpointWriter;
  readonly #admission: ThreadAdmission;
  readonly #announcer: ApprovalAnnouncer;
  #query: LiveQuery | undefined;
  /** The RunQueue slot of each query, released when it closes (idempotent). */
  readonly #slots = new WeakMap<LiveQuery, Release>();
  #queries = 0;
  #opening: Promise<LiveQuery> | undefined;
  #turnStarting = false;
  #turnSeqs: number[] = [];
  #lastSeq = 0;
  readonly #ledger: ThreadLedger;
  #idleTimer: unknown;
  #staleTimer: unknown;
  /** Claude failed to start or died this many times in a row; the next start waits until `#retryAt`. */
  #failures = 0;
  #retryAt = 0;
  #retryTimer: unknown;
  #crashLoopTold = false;
  readonly #liveRuns: Set<string>;
  /** Queries closed while they waited on a person (their slot went to another thread). */
  readonly #setAside = new WeakSet<LiveQuery>();
  /** Who asked to interrupt which run, for a run that ends without its CLI (its slot was given up). */
  #interrupted: { runId: string; by: string; reason?: string } | undefined;
  /** What people answered to calls parked while their CLI was closed, told to Claude together on resume. */
  readonly #awayAnswers: string[] = [];
  /** A bot-only turn begun and waiting for its run_started to come back (the loop guard's check). */
  #held: { runId: string; uuid: string; payload: DrainPayload; timer: unknown } | undefined;
  #stopped = false;
  #sessionStored = false;
  /** An interrupt for a run whose query was still starting (waiting for a CLI slot). */
  #pendingInterrupt: { runId: string; by: string; reason?: string } | undefined;
  /** When this session last started or finished a turn (for least-recently-used eviction). */
  lastActiveAt = 0;
  /** The bot refused to work here (no owner on the thread) and has said so in its log. */
  #refusalLogged = false;
  #toolsOffTold = false;
  #workspace: string | undefined;

  constructor(options: SessionOptions) {
    this.threadId = options.threadId;
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger.child({ threadId: options.threadId, principalId: options.selfId });
    this.#people = new ThreadPeople({
      threadId: options.threadId,
      selfId: options.selfId,
      client: options.client,
      logger: this.#log,
    });
    this.#drain = new BubbleToSdkDrain({
      selfId: options.selfId,
      displayNames: this.#people.names,
      staleMs: options.config.turns.staleRunSeconds * 1000,
    });
    this.#ledger = new ThreadLedger({ selfId: options.selfId, isBot: (p) => this.#people.isBot(p) });
    this.#liveRuns = options.liveRuns ?? new Set();
    this.#output = new ThreadOutput({
      threadId: options.threadId,
      newRunId: () => `run-${randomUUID()}`,
      now: () => new Date(this.#clock.now()),
    });
    this.#checkpoints = new CheckpointWriter({
      settle: options.settle,
      waiting: () => ({ seqs: [...this.#drain.bufferedSeqs, ...this.#turnSeqs], lastSeq: this.#lastSeq }),
      quiet: () => this.#output.isIdle && !this.#turnStarting,
      clock: this.#clock,
      logger: this.#log,
    });
    this.#outbound = new Outbound({
      append: options.client.appendEvents,
      logger: this.#log,
      clock: this.#clock,
      observe: (drafts) => {
        for (const draft of drafts) {
          if (draft.type === 'run_started') this.#liveRuns.add(draft.data.runId);
          else if (draft.type === 'run_finished') this.#liveRuns.delete(draft.data.runId);
        }
      },
    });
    this.#tools = new ToolGate({
      threadId: options.threadId,
      selfId: options.selfId,
      approvers: options.config.approvals.approvers,
      timeoutMs: options.config.approvals.timeoutSeconds * 1000,
      roles: this.#people.roles,
      botOwners: options.botOwners,
      nameOf: (id) => this.#people.names.get(id) ?? options.ownerNames?.get(id) ?? id,
      cwd: () => this.#workspaceDir(),
      privatePaths: options.isolation.kind === 'sandbox' ? options.isolation.privatePaths : [],
      clock: this.#clock,
      logger: this.#log,
      append: (events) => options.client.appendEvents(options.threadId, events),
      flush: () => this.#outbound.flush(),
      currentRunId: () => this.#output.currentRunId,
      callContext: (toolCallId) => this.#output.callContext(toolCallId),
      announce: (request) => this.#announcer.announce(request),
      onSettled: (toolCallId) => this.#announcer.settled(toolCallId),
      onDenied: (toolCallId, reason) => this.#output.noteDenied(toolCallId, reason),
      onDetachedAnswer: (call, decision) => this.#answeredWhileAway(call.toolCallId, call.toolName, decision),
      tools: options.tools,
    });
    this.#announcer = new ApprovalAnnouncer({
      threadId: options.threadId,
      output: this.#output,
      isParked: (toolCallId) => this.#tools.approvals.isParked(toolCallId),
      send: (threadId, drafts) => this.#outbound.send(threadId, drafts),
      flush: () => this.#outbound.flush(),
      clock: this.#clock,
    });
    this.#admission = new ThreadAdmission({
      threadId: options.threadId,
      botOwners: options.botOwners,
      joinableBy: options.joinableBy,
      roles: this.#people.roles,
      client: options.client,
      logger: this.#log,
    });
  }

  /**
   * Reads who is on the thread (roles for approvals, names for attribution)
   * and, for a subthread with none of the bot's owners on it, whether one is
   * on an ancestor.
   */
  async init(): Promise<void> {
    await this.#people.load();
    await this.#admission.init();
    await this.#readLedger();
  }

  /**
   * Reads the thread from `scanAfter` to its head: what the bot's runs already
   * answered (so a replay never answers a message twice, whatever the
   * checkpoint says), and which of its runs a crash left open: those are
   * closed now, `bot_restarted`, before anything new starts.
   */
  async #readLedger(): Promise<void> {
    let after = this.#o.scanAfter ?? 0;
    for (let page = 0; page < SCAN_MAX_PAGES; page += 1) {
      let events: EventEnvelope[];
      try {
        ({ events } = await this.#o.client.readEvents(this.threadId, { after, limit: 1000 }));
      } catch (error) {
        // The thread starts anyway, knowing less: the checkpoint still holds back what it settled.
        this.#log.warn({ err: error, after }, 'could not read the thread to learn what I already answered');
        break;
      }
      for (const event of events) this.#ledger.observe(event);
      if (events.length < 1000) break;
      after = events.at(-1)!.seq;
      if (page === SCAN_MAX_PAGES - 1)
        this.#log.warn({ after }, 'the thread is long: read what the bot answered in its last 20,000 events only');
    }
    const leftOpen = this.#ledger.ownOpenRuns.filter((runId) => !this.#liveRuns.has(runId));
    if (leftOpen.length === 0) return;
    this.#log.warn({ runs: leftOpen }, 'closing my runs that a restart left open');
    const events = leftOpen.map((runId) => ({
      type: 'run_finished',
      data: {
        runId,
        status: 'error',
        error: { code: 'bot_restarted', message: 'The bot restarted before this reply was finished.' },
      },
      clientEventId: `${runId}:bot-restarted`,
    }));
    for (const event of events) {
      try {
        await this.#o.client.appendEvents(this.threadId, [event]);
      } catch (error) {
        // 409: the run was closed meanwhile (another start of this bot did it). Anything else is logged.
        if (!(isBubbleApiError(error) && error.code === 'conflict'))
          this.#log.warn({ err: error, runId: event.data.runId }, 'could not close a run left open');
      }
    }
  }

  /** Whether the bot works here (see `ThreadAdmission`). */
  get admitted(): boolean {
    return this.#admission.admitted;
  }

  /** HTTP appends per thread so far (for the benchmark). */
  appendCounts(): Record<string, number> {
    return this.#outbound.appendCounts();
  }

  onEvent(event: EventEnvelope): void {
    this.#lastSeq = event.seq;
    this.#people.observe(event);
    this.#ledger.observe(event);
    if (
      this.#held &&
      event.principalId === this.#o.selfId &&
      event.type === 'run_started' &&
      event.data.runId === this.#held.runId
    )
      this.#releaseHeld(this.#held.runId);
    this.#tools.observe(event);
    const seen = this.#drain.observe(event, this.#clock.now());
    if (seen.kind === 'interrupt') this.#interrupt(seen.runId, seen.by, seen.reason, event.seq);
    this.#tryStartTurn();
    this.#armStale();
    this.#checkpoints.soon();
  }

  async stop(reason: string): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#log.info({ reason }, 'session stopping');
    this.#clearIdle();
    this.#clock.clearTimeout(this.#staleTimer);
    this.#clock.clearTimeout(this.#retryTimer);
    this.#dropHeld();
    this.#tools.approvals.cancelAll('closed');
    const query = this.#query;
    this.#query = undefined;
    if (query) {
      query.close();
      this.#slots.get(query)?.();
    }
    this.#emit(
      this.#output.closeAll({
        status: 'interrupted',
        error: { code: 'bot_stopped', message: `The bot stopped (${reason}).` },
      }),
    );
    this.#checkpoints.now();
    // A server that is away gets a few seconds to take the last events, then the batches are given up.
    const grace = this.#clock.setTimeout(() => this.#outbound.stopRetrying(), 5_000);
    await Promise.all([this.#outbound.flush(), this.#checkpoints.idle()]);
    this.#clock.clearTimeout(grace);
    this.#outbound.dispose();
  }

  #tryStartTurn(): void {
    if (this.#stopped || this.#turnStarting) return;
    if (!this.#output.isIdle) {
      if (this.#o.config.turns.steer && this.#query && !this.#query.isEnded) this.#steer();
      return;
    }
    if (this.#clock.now() < this.#retryAt) {
      // Claude failed a moment ago: what is written meanwhile waits in the buffer for the next start.
      this.#armRetry();
      return;
    }
    const payload = this.#take();
    if (!payload) return;
    if (!this.admitted) {
      if (!this.#refusalLogged) {
        this.#log.warn(
          { seqs: payload.consumedSeqs },
          'none of my owners is on this thread and only they may add me here: ignoring its messages',
        );
        this.#refusalLogged = true;
      }
      return;
    }
    this.#refusalLogged = false;
    const decision = this.#decide(payload);
    if (!decision.answer) {
      if (payload.text !== '')
        this.#log.info({ seqs: payload.consumedSeqs, reason: decision.reason }, 'turn not answered');
      return;
    }
    this.#tellToolsOff();
    const runId = `run-${randomUUID()}`;
    const uuid = randomUUID();
    this.#ledger.noteAnswered(payload.replyTo);
    this.lastActiveAt = this.#clock.now();
    this.#turnSeqs = [...payload.consumedSeqs];
    this.#clearIdle();
    const begun = this.#output.beginRun({ runId, replyTo: [...payload.replyTo], userMessageUuid: uuid });
    if (decision.botOnly) {
      // Another bot may take a bot-only turn at the same moment: the thread's order decides. The prompt waits
      // until this run_started comes back, when every turn before it has been counted (#releaseHeld).
      this.#turnStarting = true;
      this.#emit({ deliveries: [begun], open: [], signals: [], dropped: 0 });
      const timer = this.#clock.setTimeout(() => this.#releaseHeld(runId, true), HELD_TURN_MAX_MS);
      this.#held = { runId, uuid, payload, timer };
      this.#log.info({ runId, replyTo: payload.replyTo }, 'bot-only turn waits for its place on the thread');
      return;
    }
    this.#ledger.countBotTurn(this.#o.selfId, runId, payload.replyTo);
    this.#launch(runId, uuid, payload, begun);
  }

  /**
   * A held bot-only turn's run_started is on the thread (or did not come back in time): every bot turn
   * before it is counted now. Over the limit, the run closes without a word; else Claude gets the prompt.
   */
  #releaseHeld(runId: string, timedOut = false): void {
    const held = this.#held;
    if (held?.runId !== runId) return;
    this.#dropHeld();
    // Closed meanwhile (the CLI died, the bot stops): nothing to start.
    if (this.#output.currentRunId !== runId) return;
    const max = this.#o.config.turns.maxBotOnlyTurns;
    // Back from the server, the streak counts this run too; not back in time, it counts the turns seen so far.
    const over = timedOut ? this.#ledger.botOnlyStreak >= max : this.#ledger.botOnlyStreak > max;
    if (over) {
      this.#log.info(
        { runId, seqs: held.payload.consumedSeqs, reason: 'bot_only_limit', streak: this.#ledger.botOnlyStreak },
        'turn not answered',
      );
      this.#outbound.send(
        this.threadId,
        this.#output.finishRun(runId, {
          status: 'interrupted',
          interruptReason: `loop guard: ${max} bot-only turns in a row on this thread`,
        }),
      );
      this.#whenIdle();
      return;
    }
    const interrupted = this.#pendingInterrupt?.runId === runId ? this.#pendingInterrupt : undefined;
    if (interrupted) {
      this.#pendingInterrupt = undefined;
      this.#outbound.send(
        this.threadId,
        this.#output.finishRun(runId, {
          status: 'interrupted',
          interruptedBy: interrupted.by,
          ...(interrupted.reason !== undefined ? { interruptReason: interrupted.reason } : {}),
        }),
      );
      this.#whenIdle();
      return;
    }
    this.#launch(runId, held.uuid, held.payload);
  }

  #dropHeld(): void {
    if (this.#held) this.#clock.clearTimeout(this.#held.timer);
    this.#held = undefined;
    this.#turnStarting = false;
  }

  /** Gives a begun turn to Claude: the live query, or a new one (which may wait for a CLI slot). */
  #launch(runId: string, uuid: string, payload: DrainPayload, begun?: ThreadOutputStep['deliveries'][number]): void {
    const live = this.#query && !this.#query.isEnded ? this.#query : undefined;
    if (live) {
      // Warm: the CLI gets the words first (its turn is the long pole); run_started goes out while it works.
      live.push(this.#people.promptText(payload.parts), { uuid });
      if (begun) this.#emit({ deliveries: [begun], open: [], signals: [], dropped: 0 });
      this.#log.info({ runId, replyTo: payload.replyTo }, 'turn starts');
      return;
    }
    if (begun) this.#emit({ deliveries: [begun], open: [], signals: [], dropped: 0 });
    this.#log.info({ runId, replyTo: payload.replyTo }, 'turn starts');
    this.#turnStarting = true;
    void this.#ensureQuery()
      .then((query) => {
        const interrupted = this.#pendingInterrupt?.runId === runId ? this.#pendingInterrupt : undefined;
        this.#pendingInterrupt = undefined;
        if (!interrupted) {
          query.push(this.#people.promptText(payload.parts), { uuid });
          return;
        }
        // Interrupted before it started: Claude still gets the words as context, without a turn.
        this.#output.noteSteer(uuid);
        query.push(this.#people.promptText(payload.parts), { uuid, shouldQuery: false });
        const outcome = {
          status: 'interrupted' as const,
          interruptedBy: interrupted.by,
          ...(interrupted.reason !== undefined ? { interruptReason: interrupted.reason } : {}),
        };
        this.#outbound.send(this.threadId, this.#output.finishRun(runId, outcome));
        this.#log.info({ runId, by: interrupted.by }, 'turn interrupted before it started');
      })
      .catch((error: unknown) => {
        this.#log.error({ err: error, runId }, 'could not start the Claude query');
        this.#emit(
          this.#output.closeAll({
            status: 'error',
            error: { code: 'engine_start_failed', message: 'Claude could not be started.' },
          }),
        );
        this.#turnSeqs = [];
        this.#noteFailure(error instanceof Error ? error.message : String(error));
      })
      .finally(() => {
        this.#turnStarting = false;
        if (this.#output.isIdle) this.#whenIdle();
      });
  }

  /**
   * A message written while a turn runs goes to the CLI at once. One to be
   * answered is pushed as a turn of its own (`shouldQuery` true): the CLI
   * takes it into the running turn when a tool step is under way, or runs it
   * right after; the translator tells which at the turn's result and opens
   * one follow-up run for whatever the turn did not take. One the bot would
   * not answer (respondTo, the loop guard), or bots' words alone, go in as
   * context only.
   */
  #steer(): void {
    const payload = this.#take();
    if (!payload) return;
    if (!this.admitted) {
      this.#log.warn(
        { seqs: payload.consumedSeqs },
        'none of my owners is on this thread any more: not steering its messages into the turn',
      );
      return;
    }
    this.#turnSeqs.push(...payload.consumedSeqs);
    if (payload.text === '') return;
    const uuid = randomUUID();
    const decision = this.#decide(payload);
    // Bots' words alone are context too: a bot-only turn starts only where the thread's order can be checked
    // first (#releaseHeld), which a turn the CLI runs by itself after this one does not allow.
    if (!decision.answer || decision.botOnly) {
      const reason = decision.answer ? 'bot_only_aside' : decision.reason;
      this.#log.info(
        { runId: this.#output.currentRunId, seqs: payload.consumedSeqs, reason },
        'steering the running turn (as context, not to be answered)',
      );
      this.#output.noteSteer(uuid);
      this.#query!.push(this.#people.promptText(payload.parts), { uuid, shouldQuery: false });
      return;
    }
    this.#log.info(
      { runId: this.#output.currentRunId, seqs: payload.consumedSeqs, replyTo: payload.replyTo },
      'steering the running turn',
    );
    this.#output.noteAside(uuid, payload.replyTo);
    this.#query!.push(this.#people.promptText(payload.parts), { uuid });
  }

  /** Whether to answer a drained payload: respondTo, and the thread's bot-only streak whichever bots took it. */
  #decide(payload: DrainPayload) {
    return decideTurn({
      parts: payload.parts,
      respondTo: this.#o.config.turns.respondTo,
      selfId: this.#o.selfId,
      ...(this.#people.selfDisplayName ? { selfDisplayName: this.#people.selfDisplayName } : {}),
      isBot: (p) => this.#people.isBot(p),
      botOnlyStreak: this.#ledger.botOnlyStreak,
      maxBotOnlyTurns: this.#o.config.turns.maxBotOnlyTurns,
    });
  }

  /**
   * Drains the buffer (finished runs, and runs gone quiet for `turns.staleRunSeconds`)
   * and leaves out what one of the bot's runs already answered (a replay after a restart).
   */
  #take(): DrainPayload | undefined {
    const raw = this.#drain.drain(this.#clock.now());
    if (!raw) return undefined;
    if (raw.stale.length > 0) {
      this.#log.info(
        { runs: raw.stale, staleRunSeconds: this.#o.config.turns.staleRunSeconds },
        'a message never finished and its author went quiet: taking it as it stands',
      );
    }
    const parts = raw.parts.filter((part) => !this.#ledger.answered(part.seqs));
    const replyTo = raw.replyTo.filter((seq) => !this.#ledger.answered([seq]));
    if (parts.length === raw.parts.length && replyTo.length === raw.replyTo.length) return raw;
    this.#log.info(
      { seqs: raw.replyTo.filter((seq) => !replyTo.includes(seq)) },
      'already answered (the thread says so): not answering again',
    );
    return { ...raw, parts, replyTo, text: formatDrainText(parts) };
  }

  /**
   * Wakes the session when the oldest unfinished message in the buffer turns stale. A wake that could
   * not drain it (a turn starting, Claude backing off) tries again a second later, not in a tight loop;
   * the end of a turn arms it afresh.
   */
  #armStale(minDelayMs = 10): void {
    this.#clock.clearTimeout(this.#staleTimer);
    this.#staleTimer = undefined;
    const at = this.#drain.nextStaleAt;
    if (at === undefined || this.#stopped) return;
    this.#staleTimer = this.#clock.setTimeout(
      () => {
        this.#staleTimer = undefined;
        this.#tryStartTurn();
        this.#armStale(1_000);
        this.#checkpoints.soon();
      },
      Math.max(minDelayMs, at - this.#clock.now() + 10),
    );
  }

  /** Claude failed to start or died: the next start waits, doubling each time, and the thread hears once when it keeps failing. */
  #noteFailure(reason: string): void {
    this.#failures += 1;
    const delayMs = Math.min(
      this.#o.config.limits.restartBackoffMaxSeconds * 1000,
      RESTART_BASE_MS * 2 ** (this.#failures - 1),
    );
    this.#retryAt = this.#clock.now() + delayMs;
    this.#log.warn({ failures: this.#failures, delayMs }, 'Claude failed; waiting before starting it again');
    if (this.#failures >= CRASH_LOOP_TELL_AFTER && !this.#crashLoopTold) {
      this.#crashLoopTold = true;
      this.#notice(
        `Claude keeps failing to start on my machine (${this.#failures} times in a row; last: ${reason}). I keep trying, at most ${this.#o.config.limits.restartBackoffMaxSeconds} s apart, and will answer what is written here once it works.`,
      );
    }
    this.#armRetry();
  }

  #armRetry(): void {
    if (this.#retryTimer !== undefined || this.#stopped) return;
    this.#retryTimer = this.#clock.setTimeout(
      () => {
        this.#retryTimer = undefined;
        this.#tryStartTurn();
        this.#armStale();
      },
      Math.max(0, this.#retryAt - this.#clock.now()),
    );
  }

  /** Interrupts a sub-agent run of this session's query; false when the run is not one of them. */
  interruptChildRun(runId: string, by: string, reason: string | undefined, seq: number): boolean {
    if (!this.#output.childRun(runId)) return false;
    this.#interrupt(runId, by, reason, seq);
    return true;
  }

  #interrupt(runId: string, by: string, reason: string | undefined, seq: number): void {
    const child = this.#output.childRun(runId);
    if (child && this.#query) {
      // A sub-agent's run: a background agent is stopped alone; a foreground one only with the turn it runs in.
      this.#log.info(
        { runId, by, seq, toolCallId: child.toolCallId, background: child.background },
        'sub-agent interrupt requested',
      );
      this.#output.noteChildInterrupt(child.toolCallId, { by, ...(reason !== undefined ? { reason } : {}) });
      const stop =
        child.background && child.taskId ? this.#query.sdkQuery.stopTask(child.taskId) : this.#query.interrupt();
      Promise.resolve(stop).catch((error: unknown) =>
        this.#log.warn({ err: error, runId }, 'sub-agent interrupt failed'),
      );
      return;
    }
    const carried = this.#announcer.callOfRun(runId);
    if (carried !== undefined) {
      // Stop on a run that only carries an approval request: the call is denied, the run closes.
      this.#log.info({ runId, by, seq, toolCallId: carried }, 'interrupt of an approval request');
      this.#announcer.noteStop(carried, { by, ...(reason !== undefined ? { reason } : {}) });
      this.#tools.approvals.cancel(carried);
      return;
    }
    if (runId !== this.#output.currentRunId) {
      this.#o.routeInterrupt?.(runId, by, reason, seq, this);
      return;
    }
    this.#log.info({ runId, by, seq }, 'interrupt requested');
    this.#output.noteInterrupt(runId, { by, ...(reason !== undefined ? { reason } : {}) });
    this.#interrupted = { runId, by, ...(reason !== undefined ? { reason } : {}) };
    this.#tools.forgetAnswered();
    this.#tools.approvals.cancelAll('interrupt');
    if (this.#turnStarting) {
      // The turn has not reached a CLI yet (it waits for a slot): it ends when it gets one.
      this.#pendingInterrupt = { runId, by, ...(reason !== undefined ? { reason } : {}) };
      return;
    }
    if (!this.#query) return;
    this.#query.interrupt().catch((error: unknown) => this.#log.warn({ err: error, runId }, 'interrupt failed'));
  }

  /**
   * Whether this thread's CLI does nothing but wait on a person: every open call parked on an
   * approval, no sub-agent running, no turn starting. Its slot may go to a thread that needs one.
   */
  get yieldable(): boolean {
    return (
      !!this.#query &&
      !this.#query.isEnded &&
      !this.#stopped &&
      !this.#turnStarting &&
      this.#held === undefined &&
      !this.#output.isIdle &&
      this.#tools.approvals.size > 0 &&
      !this.#tools.approvals.allDetached &&
      this.#output.activeSubagents.length === 0 &&
      // Nothing running: every call without a result is one waiting for approval.
      [...this.#output.openCalls].every((toolCallId) => this.#tools.approvals.isParked(toolCallId))
    );
  }

  /**
   * Gives up the CLI slot while the turn waits on a person: the CLI is closed, the run stays open, and
   * the parked calls stay parked (with their timeout). When one is answered, the query resumes by
   * session id and Claude is asked to make the call again; the answer given stands for it.
   */
  yieldSlot(reason: string): void {
    if (!this.yieldable) return;
    const query = this.#query!;
    const parked = this.#tools.approvals.detachAll();
    this.#log.info(
      { reason, parked: parked.map((call) => call.toolCallId), runId: this.#output.currentRunId },
      'waiting on a person: yielded my CLI slot',
    );
    if (!this.#sessionStored && query.sessionId) {
      this.#o.store.setClaudeSession(this.threadId, query.sessionId);
      this.#sessionStored = true;
    }
    this.#clearIdle();
    this.#setAside.add(query);
    this.#query = undefined;
    query.close();
    this.#slots.get(query)?.();
  }

  /**
   * A call parked while its CLI was closed is settled. Once every such call is, the query resumes by
   * session id with one message that tells Claude each answer (an allowed call is to be made again:
   * the answer stands for it, in this run). An interrupt of the run ends it without a CLI.
   */
  #answeredWhileAway(
    toolCallId: string,
    toolName: string,
    decision: { behavior: string; by: string | null; source: string; message?: string },
  ): void {
    if (this.#stopped) return;
    const runId = this.#output.currentRunId;
    if (runId === undefined) return;
    const interrupted =
      decision.source === 'closed' || (decision.source === 'interrupt' && this.#interrupted?.runId === runId);
    // The first call will get no result from the CLI that asked it: end it on the thread.
    const aside = `This call waited for approval while its Claude process was closed to free a slot for another thread; ${interrupted ? 'the run was stopped.' : 'Claude was told the answer.'}`;
    this.#outbound.send(this.threadId, [this.#output.callSetAside(runId, toolCallId, aside)]);
    if (!interrupted) {
      const who = decision.by !== null ? (this.#people.names.get(decision.by) ?? decision.by) : 'Nobody';
      this.#awayAnswers.push(
        decision.behavior === 'allow'
          ? `${who} allowed your ${toolName} call; make the same call again now.`
          : decision.source === 'result'
            ? `${who} answered your ${toolName} call in its place; make the same call again to receive that answer.`
            : `Your ${toolName} call was not allowed (${decision.message ?? 'denied'}); carry on without it.`,
      );
    }
    if (this.#tools.approvals.size > 0) return;
    const answers = this.#awayAnswers.splice(0);
    if (interrupted || this.#interrupted?.runId === runId) {
      this.#finishInterrupted(runId);
      return;
    }
    const text = `While these calls waited for approval your process was stopped to free a slot, and restarted now. ${answers.join(' ')}`;
    this.#log.info({ runId, answers: answers.length }, 'answers for calls whose CLI was closed: resuming the query');
    const uuid = randomUUID();
    this.#turnStarting = true;
    void this.#ensureQuery()
      .then((query) => {
        // Interrupted while it waited for a slot, or closed meanwhile: Claude gets the words as context, no turn.
        if (this.#output.currentRunId !== runId || this.#pendingInterrupt?.runId === runId) {
          query.push(text, { uuid, shouldQuery: false });
          this.#output.noteSteer(uuid);
          if (this.#output.currentRunId === runId) this.#finishInterrupted(runId);
          this.#pendingInterrupt = undefined;
          return;
        }
        query.push(text, { uuid });
      })
      .catch((error: unknown) => {
        this.#log.error({ err: error, runId }, 'could not resume the Claude query');
        this.#tools.forgetAnswered();
        this.#emit(
          this.#output.closeAll({
            status: 'error',
            error: { code: 'engine_start_failed', message: 'Claude could not be started again.' },
          }),
        );
        this.#noteFailure(error instanceof Error ? error.message : String(error));
      })
      .finally(() => {
        this.#turnStarting = false;
        if (this.#output.isIdle) this.#whenIdle();
      });
  }

  /** Ends a run as interrupted without its CLI (it gave its slot up), crediting who asked. */
  #finishInterrupted(runId: string): void {
    const by = this.#interrupted?.runId === runId ? this.#interrupted : undefined;
    this.#tools.forgetAnswered();
    this.#outbound.send(
      this.threadId,
      this.#output.finishRun(runId, {
        status: 'interrupted',
        ...(by ? { interruptedBy: by.by, ...(by.reason !== undefined ? { interruptReason: by.reason } : {}) } : {}),
      }),
    );
    this.#whenIdle();
  }

  /** Nothing under way: no query, no turn, nothing buffered that is final (a subthread's session may end). */
  get quiet(): boolean {
    return (
      (!this.#query || this.#query.isEnded) &&
      this.#output.isIdle &&
      !this.#turnStarting &&
      this.#held === undefined &&
      this.#tools.approvals.size === 0
    );
  }

  /** Whether another thread may take this session's CLI slot now. */
  get evictable(): boolean {
    return (
      !!this.#query &&
      !this.#query.isEnded &&
      this.#output.isIdle &&
      !this.#turnStarting &&
      this.#tools.approvals.size === 0 &&
      this.#output.activeSubagents.length === 0
    );
  }

  /** Closes the idle query (it resumes by session id on the next turn). */
  closeIdleQuery(reason: string): void {
    if (!this.evictable) return;
    this.#clearIdle();
    this.#log.info({ reason }, 'query idle; closing it (it resumes by session id on the next turn)');
    const query = this.#query!;
    this.#query = undefined;
    query.close();
    this.#slots.get(query)?.();
  }

  async #ensureQuery(): Promise<LiveQuery> {
    if (this.#query && !this.#query.isEnded) return this.#query;
    this.#opening ??= this.#openQuery().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #openQuery(): Promise<LiveQuery> {
    const { runQueue } = this.#o;
    if (runQueue.snapshot().running.length >= runQueue.size && this.#o.evictIdle?.(this)) {
      this.#log.info('took the CLI slot of an idle thread');
    }
    const ticket = runQueue.enqueue({ id: `${this.threadId}#${++this.#queries}` });
    const position = ticket.position();
    if (position !== null && position > 0) {
      // Every CLI slot is busy (threads mid-turn, or waiting on a person): say so, in the log and on the thread.
      const runId = this.#output.currentRunId;
      this.#log.info({ position, slots: runQueue.size, runId }, 'turn waits for a CLI slot');
      if (runId !== undefined)
        this.#outbound.send(this.threadId, [
          this.#output.status(runId, { waitingForSlot: position, slots: runQueue.size }),
        ]);
    }
    const release = await ticket.acquired;
    const { config } = this.#o;
    const record = this.#o.store.fixWorkspace(
      this.threadId,
      join(config.claude.workspaceRoot, safeDirName(this.threadId)),
    );
    mkdirSync(record.workspace, { recursive: true });
    this.#workspace = record.workspace;
    // Each thread's CLI has temp files of its own (sub-agent outputs live there), so no thread's commands see another's.
    const tmp = join(tmpRootOf(config), safeDirName(this.threadId));
    mkdirSync(tmp, { recursive: true });
    this.#sessionStored = record.claudeSessionId !== null;
    const options = buildQueryOptions({
      config,
      threadId: this.threadId,
      cwd: record.workspace,
      env: { ...this.#o.childEnv, CLAUDE_CODE_TMPDIR: tmp, TMPDIR: tmp },
      canUseTool: this.#tools.canUseTool,
      isolation: this.#o.isolation,
      ...(record.claudeSessionId ? { resume: record.claudeSessionId } : {}),
      ...(this.#o.tools ? { mcpServers: this.#tools.mcpServers() } : {}),
    });
    this.#log.info({ cwd: record.workspace, resume: record.claudeSessionId ?? undefined }, 'opening the Claude query');
    let query: LiveQuery;
    try {
      query = this.#o.startQuery({ options, logger: this.#log });
    } catch (error) {
      release();
      throw error;
    }
    this.#slots.set(query, release);
    this.#query = query;
    this.#output.newQuery();
    void this.#pump(query);
    return query;
  }

  async #pump(query: LiveQuery): Promise<void> {
    for await (const raw of query.messages) {
      // A CLI closed to free its slot: what it says on the way out (its refused permission request) is not shown.
      if (this.#setAside.has(query)) continue;
      const step = this.#output.push(narrowSdkMessage(raw));
      if (this.#log.isLevelEnabled('trace')) this.#trace(raw, step);
      await this.#apply(step);
      for (const signal of step.signals) {
        if (signal.kind === 'run_finished') this.#onRunFinished(query, signal.runId, signal.outcome.status);
        else if (signal.kind === 'skipped') this.#log.debug({ reason: signal.reason }, 'SDK message skipped');
        else if (signal.kind === 'run_opened' && signal.followUp)
          this.#log.info(
            { runId: signal.runId, replyTo: signal.followUp },
            'follow-up turn for what was written during the last one',
          );
        else if (signal.kind === 'api_retry')
          this.#log.warn({ attempt: signal.attempt, status: signal.errorStatus }, 'Claude API retry');
      }
    }
    const end = await query.ended;
    if (this.#query === query) this.#query = undefined;
    this.#slots.get(query)?.();
    if (end.reason !== 'closed') {
      this.#log.error({ reason: end.reason, err: end.error, kind: end.classified?.kind }, 'the Claude query ended');
      const message = end.classified?.message ?? 'The Claude process stopped unexpectedly.';
      this.#emit(
        this.#output.closeAll({ status: 'error', error: { code: end.classified?.kind ?? 'cli_exit', message } }),
      );
      // A bot-only turn held for its place was closed with the rest.
      if (this.#held) this.#dropHeld();
      if (end.classified?.kind === 'session_not_found') this.#o.store.setClaudeSession(this.threadId, null);
      this.#turnSeqs = [];
      this.#checkpoints.soon();
      this.#noteFailure(message);
    }
  }

  /** Trace lines for latency work: when the CLI starts a turn and when the first words come. */
  #trace(raw: { type: string; subtype?: string }, step: ThreadOutputStep): void {
    const firstDelta = step.deliveries.some((d) =>
      d.events.some(
        (e) => e.type === 'message_part' && e.data.chunk.type === 'text-delta' && e.clientEventId.endsWith(':2'),
      ),
    );
    if (raw.type === 'system' && raw.subtype === 'init') this.#log.trace('sdk: system/init');
    else if (raw.type === 'stream_event' && (raw as { event?: { type?: string } }).event?.type === 'message_start')
      this.#log.trace('sdk: message_start');
    if (firstDelta) this.#log.trace({ runId: this.#output.currentRunId }, 'sdk: first text delta');
  }

  #onRunFinished(query: LiveQuery, runId: string, status: string): void {
    this.#log.info({ runId, status }, 'run finished');
    // Answers kept for calls to be made again belong to their run.
    this.#tools.forgetAnswered();
    // A result came: the CLI works.
    this.#failures = 0;
    this.#crashLoopTold = false;
    this.lastActiveAt = this.#clock.now();
    if (!this.#sessionStored && query.sessionId) {
      // The transcript exists once a turn has finished: only now is the id worth resuming.
      this.#o.store.setClaudeSession(this.threadId, query.sessionId);
      this.#sessionStored = true;
    }
    if (this.#output.isIdle) this.#whenIdle();
  }

  /** Between turns: settle, start the next turn if one is waiting, else yield or arm the idle close. */
  #whenIdle(): void {
    this.#turnSeqs = [];
    this.#checkpoints.soon();
    this.#tryStartTurn();
    this.#armStale();
    if (this.#output.isIdle && !this.#turnStarting) {
      // Another thread waits for a CLI slot: this one is done for now, so it yields its own.
      if (this.#o.runQueue.snapshot().waiting.length > 0) this.closeIdleQuery('another thread waits for a CLI slot');
      else this.#armIdle();
    }
  }

  /** Sends deliveries; creates subthreads for sub-agents (awaited, so the parent's chunk names the child). */
  async #apply(step: ThreadOutputStep): Promise<void> {
    this.#emit(step);
    for (const request of step.open) {
      let next: ThreadOutputStep;
      try {
        const { thread } = await this.#o.client.createSubthread(request.parentThreadId, {
          key: request.key,
          ...(request.title ? { title: request.title } : {}),
        });
        this.#log.info(
          { toolCallId: request.toolCallId, childThreadId: thread.threadId },
          'sub-agent subthread opened',
        );
        next = this.#output.attached(request.toolCallId, thread.threadId);
      } catch (error) {
        this.#log.error({ err: error, toolCallId: request.toolCallId }, 'sub-agent subthread could not be created');
        next = this.#output.failedToAttach(request.toolCallId);
      }
      await this.#apply(next);
    }
    if (step.dropped > 0) this.#log.warn({ dropped: step.dropped }, 'sub-agent messages dropped');
  }

  /** Where the sandbox cannot start, the first turn of each thread says that tools are off, and why. */
  #tellToolsOff(): void {
    const isolation = this.#o.isolation;
    if (isolation.kind !== 'unavailable' || this.#toolsOffTold) return;
    this.#toolsOffTold = true;
    this.#notice(
      `Tools are off: this bot runs commands only inside Claude Code's sandbox, and the sandbox cannot start on its machine (${isolation.reason}). I can still talk, but I will not run any tool until my owner fixes that.`,
    );
  }

  /** A short run of the bot's own that says something about itself (not an answer to anyone). */
  #notice(text: string): void {
    const runId = `notice-${randomUUID()}`;
    this.#outbound.send(this.threadId, [
      { type: 'run_started', data: { runId }, clientEventId: `${runId}:start` },
      {
        type: 'message_part',
        data: { runId, chunk: { type: 'text-start', id: `${runId}:t0` } },
        clientEventId: `${runId}:1`,
      },
      {
        type: 'message_part',
        data: { runId, chunk: { type: 'text-delta', id: `${runId}:t0`, delta: text } },
        clientEventId: `${runId}:2`,
      },
      {
        type: 'message_part',
        data: { runId, chunk: { type: 'text-end', id: `${runId}:t0` } },
        clientEventId: `${runId}:3`,
      },
      { type: 'run_finished', data: { runId, status: 'completed' }, clientEventId: `${runId}:finish` },
    ]);
  }

  #workspaceDir(): string {
    return this.#workspace ?? join(this.#o.config.claude.workspaceRoot, safeDirName(this.threadId));
  }

  #emit(step: ThreadOutputStep): void {
    for (const delivery of step.deliveries) this.#outbound.send(delivery.threadId, delivery.events);
    for (const childThreadId of step.ended ?? []) {
      // A sub-agent ended (done, or its CLI died): the child run's end goes out first, then its subthread's session may go.
      void this.#outbound.flush().then(() => this.#o.subthreadEnded?.(childThreadId));
    }
  }

  #armIdle(): void {
    this.#clearIdle();
    if (this.#tools.approvals.size > 0 || this.#output.activeSubagents.length > 0) return;
    this.#idleTimer = this.#clock.setTimeout(() => {
      this.#idleTimer = undefined;
      this.closeIdleQuery('idle timeout');
    }, this.#o.config.limits.idleQueryTimeoutSeconds * 1000);
  }

  #clearIdle(): void {
    if (this.#idleTimer !== undefined) this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }
}

/** A thread id as one directory name (ids are opaque; keep them readable but safe). */
export function safeDirName(threadId: string): string {
  return threadId.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
}
