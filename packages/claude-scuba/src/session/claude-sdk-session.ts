import type { LiveQuery, LiveQueryEnd, NarrowedSdkMessage } from '@bubble/engine';
import type { EventEnvelope } from '@bubble/protocol';
import { scanThreadLedger } from './ledger-scan.js';
import { OneShotTimer } from './one-shot-timer.js';
import type { SessionClient, SessionOptions } from './session-options.js';
import { createSessionParts, type SessionParts } from './session-parts.js';
import { SlotYield } from './slot-yield.js';
import type { ThreadOutputStep } from './thread-output.js';
import { TurnStarter } from './turn-starter.js';
import {
  eventSeen,
  firstTextDeltas,
  interruptAsked,
  interruptBeforeStart,
  interruptNote,
  runFinished,
  sessionStopped,
  textStarted,
  turnSettled,
  type Interrupt,
} from './turn-state.js';

export type { SessionClient, SessionOptions } from './session-options.js';
export { safeDirName } from './thread-query.js';

/**
 * One thread's Claude: the drain rule feeds one long-lived streaming query,
 * its output is translated onto the thread (and sub-agents' subthreads), and
 * tool approvals are parked until someone allowed answers. Event delivery is
 * never blocked on Claude: turns start asynchronously.
 *
 * The session holds the parts (`session-parts.ts`) and one turn state value
 * (`turn-state.ts`); starting turns is `TurnStarter`'s, giving a waiting
 * turn's CLI slot up is `SlotYield`'s, the query itself is `ThreadQuery`'s.
 * What stays here: events in, the query's messages out, interrupts, idle and
 * stop.
 */
export class ClaudeSdkSession {
  readonly threadId: string;
  readonly #parts: SessionParts;
  readonly #starter: TurnStarter;
  readonly #slotYield: SlotYield;
  readonly #client: SessionClient;
  /** Where `init` starts reading the thread (see `SessionOptions.scanAfter`). */
  readonly #scanAfter: number;
  readonly #evictIdle: SessionOptions['evictIdle'];
  readonly #routeInterrupt: SessionOptions['routeInterrupt'];
  /** Closes the query after `limits.idleQueryTimeoutSeconds` between turns. */
  readonly #idleTimer: OneShotTimer;
  /** Wakes the session when a message that never finished turns stale. */
  readonly #staleTimer: OneShotTimer;

  constructor(options: SessionOptions) {
    this.threadId = options.threadId;
    this.#client = options.client;
    this.#scanAfter = options.scanAfter ?? 0;
    this.#evictIdle = options.evictIdle;
    this.#routeInterrupt = options.routeInterrupt;
    this.#parts = createSessionParts(options, {
      answeredWhileAway: (call, decision) => this.#slotYield.answered(call, decision),
      freeSlot: () => this.#evictIdle?.(this) ?? false,
      message: (query, message) => this.#onMessage(query, message),
      queryEnded: (_query, end) => this.#onQueryEnded(end),
    });
    const clearIdle = () => this.#idleTimer.clear();
    const whenIdle = () => this.#whenIdle();
    this.#starter = new TurnStarter(
      this.#parts,
      { whenIdle, clearIdle, armStale: () => this.#armStale() },
      options.isolation,
    );
    this.#slotYield = new SlotYield(this.#parts, {
      whenIdle,
      clearIdle,
      noteFailure: (reason) => this.#starter.noteFailure(reason),
    });
    this.#idleTimer = new OneShotTimer(this.#parts.clock);
    this.#staleTimer = new OneShotTimer(this.#parts.clock);
  }

  /**
   * Reads who is on the thread (roles for approvals, names for attribution),
   * for a subthread with none of the bot's owners on it whether one is on an
   * ancestor, and the thread itself: what the bot already answered, and its
   * runs a crash left open (closed now).
   */
  async init(): Promise<void> {
    const { people, admission, ledger, liveRuns, log } = this.#parts;
    await people.load();
    await admission.init();
    await scanThreadLedger({
      threadId: this.threadId,
      client: this.#client,
      ledger,
      after: this.#scanAfter,
      liveRuns,
      logger: log,
    });
  }

  /** Whether the bot works here (see `ThreadAdmission`). */
  get admitted(): boolean {
    return this.#parts.admission.admitted;
  }

  /** When this session last started or finished a turn (for least-recently-used eviction). */
  get lastActiveAt(): number {
    return this.#parts.turn.lastActiveAt;
  }

  /** HTTP appends per thread so far (for the benchmark). */
  appendCounts(): Record<string, number> {
    return this.#parts.outbound.appendCounts();
  }

  onEvent(event: EventEnvelope): void {
    const parts = this.#parts;
    parts.turn = eventSeen(parts.turn, event.seq);
    parts.people.observe(event);
    parts.ledger.observe(event);
    this.#starter.observe(event);
    parts.tools.observe(event);
    const seen = parts.drain.observe(event, parts.clock.now());
    if (seen.kind === 'interrupt') this.#interrupt(seen.runId, seen.by, seen.reason, event.seq);
    this.#starter.tryStart();
    this.#armStale();
    parts.checkpoints.soon();
  }

  async stop(reason: string): Promise<void> {
    const parts = this.#parts;
    if (parts.turn.stopped) return;
    parts.turn = sessionStopped(parts.turn);
    parts.log.info({ reason }, 'session stopping');
    this.#idleTimer.clear();
    this.#staleTimer.clear();
    this.#starter.stop();
    parts.tools.approvals.cancelAll('closed');
    parts.query.close();
    parts.sender.send(
      parts.output.closeAll({
        status: 'interrupted',
        error: { code: 'bot_stopped', message: `The bot stopped (${reason}).` },
      }),
    );
    parts.checkpoints.now();
    // A server that is away gets a few seconds to take the last events, then the batches are given up.
    const grace = parts.clock.setTimeout(() => parts.outbound.stopRetrying(), 5_000);
    await Promise.all([parts.outbound.flush(), parts.checkpoints.idle()]);
    parts.clock.clearTimeout(grace);
    parts.outbound.dispose();
  }

  /** Nothing under way: no query, no turn, nothing buffered that is final (a subthread's session may end). */
  get quiet(): boolean {
    const { query, output, turn, tools } = this.#parts;
    return query.live === undefined && output.isIdle && turn.starting === undefined && tools.approvals.size === 0;
  }

  /**
   * Nothing in memory that the thread cannot give back: no CLI, no turn, no approval, nothing
   * buffered from anyone. Such a session may be dropped; the next event reads the thread again.
   */
  get droppable(): boolean {
    const { turn, drain, output, outbound, ledger } = this.#parts;
    return (
      this.quiet &&
      !turn.stopped &&
      drain.bufferedSeqs.length === 0 &&
      output.activeSubagents.length === 0 &&
      // Everything it wrote has landed, and no run of the bot is open here (a sub-agent's, written by its parent).
      outbound.idle &&
      ledger.ownOpenRuns.length === 0
    );
  }

  /** Whether another thread may take this session's CLI slot now. */
  get evictable(): boolean {
    const { query, output, turn, tools } = this.#parts;
    return (
      query.live !== undefined &&
      output.isIdle &&
      turn.starting === undefined &&
      tools.approvals.size === 0 &&
      output.activeSubagents.length === 0
    );
  }

  /** Closes the idle query (it resumes by session id on the next turn). */
  closeIdleQuery(reason: string): void {
    if (!this.evictable) return;
    this.#idleTimer.clear();
    this.#parts.log.info({ reason }, 'query idle; closing it (it resumes by session id on the next turn)');
    this.#parts.query.close();
  }

  /** Whether this thread's CLI does nothing but wait on a person (see `SlotYield`). */
  get yieldable(): boolean {
    return this.#slotYield.yieldable;
  }

  /** Gives up the CLI slot while the turn waits on a person (see `SlotYield`). */
  yieldSlot(reason: string): void {
    this.#slotYield.yieldSlot(reason);
  }

  /** Interrupts a sub-agent run of this session's query; false when the run is not one of them. */
  interruptChildRun(runId: string, by: string, reason: string | undefined, seq: number): boolean {
    if (!this.#parts.output.childRun(runId)) return false;
    this.#interrupt(runId, by, reason, seq);
    return true;
  }

  #interrupt(runId: string, by: string, reason: string | undefined, seq: number): void {
    const parts = this.#parts;
    const { output, log, tools, announcer } = parts;
    const interrupt: Interrupt = { runId, by, reason };
    const query = parts.query.current;
    const child = output.childRun(runId);
    if (child && query) {
      // A sub-agent's run: a background agent is stopped alone; a foreground one only with the turn it runs in.
      log.info(
        { runId, by, seq, toolCallId: child.toolCallId, background: child.background },
        'sub-agent interrupt requested',
      );
      output.noteChildInterrupt(child.toolCallId, interruptNote(interrupt));
      const stop = child.background && child.taskId ? query.sdkQuery.stopTask(child.taskId) : query.interrupt();
      Promise.resolve(stop).catch((error: unknown) => log.warn({ err: error, runId }, 'sub-agent interrupt failed'));
      return;
    }
    const carried = announcer.callOfRun(runId);
    if (carried !== undefined) {
      // Stop on a run that only carries an approval request: the call is denied, the run closes.
      log.info({ runId, by, seq, toolCallId: carried }, 'interrupt of an approval request');
      announcer.noteStop(carried, interruptNote(interrupt));
      tools.approvals.cancel(carried);
      return;
    }
    if (runId !== output.currentRunId) {
      this.#routeInterrupt?.(runId, by, reason, seq, this);
      return;
    }
    log.info({ runId, by, seq }, 'interrupt requested');
    output.noteInterrupt(runId, interruptNote(interrupt));
    parts.turn = interruptAsked(parts.turn, interrupt);
    tools.forgetAnswered();
    tools.approvals.cancelAll('interrupt');
    if (parts.turn.starting) {
      // The turn has not reached a CLI yet (it waits for a slot, or for its place): it ends when it would start.
      parts.turn = interruptBeforeStart(parts.turn, interrupt);
      return;
    }
    parts.query.current?.interrupt().catch((error: unknown) => log.warn({ err: error, runId }, 'interrupt failed'));
  }

  /** One message of the query: onto the threads, then what it signals. */
  async #onMessage(query: LiveQuery, message: NarrowedSdkMessage): Promise<void> {
    const { output, sender, log } = this.#parts;
    const step = output.push(message);
    if (log.isLevelEnabled('trace')) this.#trace(message, step);
    await sender.apply(step);
    for (const signal of step.signals) {
      if (signal.kind === 'run_finished') this.#onRunFinished(query, signal.runId, signal.outcome.status);
      else if (signal.kind === 'skipped') log.debug({ reason: signal.reason }, 'SDK message skipped');
      else if (signal.kind === 'run_opened' && signal.followUp)
        log.info(
          { runId: signal.runId, replyTo: signal.followUp },
          'follow-up turn for what was written during the last one',
        );
      else if (signal.kind === 'api_retry')
        log.warn({ attempt: signal.attempt, status: signal.errorStatus }, 'Claude API retry');
    }
  }

  /** The query ended; unless it was closed on purpose, every open run ends as an error and the next start waits. */
  #onQueryEnded(end: LiveQueryEnd): void {
    if (end.reason === 'closed') return;
    const parts = this.#parts;
    parts.log.error({ reason: end.reason, err: end.error, kind: end.classified?.kind }, 'the Claude query ended');
    const message = end.classified?.message ?? 'The Claude process stopped unexpectedly.';
    parts.sender.send(
      parts.output.closeAll({ status: 'error', error: { code: end.classified?.kind ?? 'cli_exit', message } }),
    );
    // A bot-only turn held for its place was closed with the rest.
    this.#starter.dropHeld();
    if (end.classified?.kind === 'session_not_found') parts.query.forgetSessionId();
    parts.turn = turnSettled(parts.turn);
    parts.checkpoints.soon();
    this.#starter.noteFailure(message);
  }

  /** Trace lines for latency work: when the CLI starts a turn and when each run's first words come. */
  #trace(message: NarrowedSdkMessage, step: ThreadOutputStep): void {
    const parts = this.#parts;
    if (message.kind === 'init') parts.log.trace('sdk: system/init');
    else if (message.kind === 'stream_event' && message.message.event.type === 'message_start')
      parts.log.trace('sdk: message_start');
    for (const runId of firstTextDeltas(parts.turn, this.threadId, step.deliveries)) {
      parts.turn = textStarted(parts.turn, runId);
      parts.log.trace({ runId }, 'sdk: first text delta');
    }
  }

  #onRunFinished(query: LiveQuery, runId: string, status: string): void {
    const parts = this.#parts;
    parts.log.info({ runId, status }, 'run finished');
    // Answers kept for calls to be made again belong to their run.
    parts.tools.forgetAnswered();
    // A result came: the CLI works.
    parts.turn = runFinished(parts.turn, parts.clock.now());
    // The transcript exists once a turn has finished: only now is the id worth resuming.
    parts.query.storeSessionId(query);
    if (parts.output.isIdle) this.#whenIdle();
  }

  /** Between turns: settle, start the next turn if one is waiting, else yield or arm the idle close. */
  #whenIdle(): void {
    const parts = this.#parts;
    parts.turn = turnSettled(parts.turn);
    parts.checkpoints.soon();
    this.#starter.tryStart();
    this.#armStale();
    if (parts.output.isIdle && parts.turn.starting === undefined) {
      // Another thread waits for a CLI slot: this one is done for now, so it yields its own.
      if (parts.query.othersWaiting) this.closeIdleQuery('another thread waits for a CLI slot');
      else this.#armIdle();
    }
  }

  /**
   * Wakes the session when the oldest unfinished message in the buffer turns stale. A wake that could
   * not drain it (a turn starting, Claude backing off) tries again a second later, not in a tight loop;
   * the end of a turn arms it afresh.
   */
  #armStale(minDelayMs = 10): void {
    const { drain, turn, clock, checkpoints } = this.#parts;
    this.#staleTimer.clear();
    const at = drain.nextStaleAt;
    if (at === undefined || turn.stopped) return;
    this.#staleTimer.arm(Math.max(minDelayMs, at - clock.now() + 10), () => {
      this.#starter.tryStart();
      this.#armStale(1_000);
      checkpoints.soon();
    });
  }

  #armIdle(): void {
    const { tools, output, config } = this.#parts;
    this.#idleTimer.clear();
    if (tools.approvals.size > 0 || output.activeSubagents.length > 0) return;
    this.#idleTimer.arm(config.limits.idleQueryTimeoutSeconds * 1000, () => this.closeIdleQuery('idle timeout'));
  }
}
