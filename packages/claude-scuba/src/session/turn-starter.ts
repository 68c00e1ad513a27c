import { randomUUID } from 'node:crypto';
import type { LiveQuery, ToolIsolation } from '@bubble/engine';
import type { EventEnvelope } from '@bubble/protocol';
import { formatDrainText, type DrainPayload } from '@bubble/sdk';
import { OneShotTimer } from './one-shot-timer.js';
import type { SessionParts } from './session-parts.js';
import { crashLoopText, noticeEvents, toolsOffText } from './session-notices.js';
import type { Delivery } from './subagent-registry.js';
import {
  claudeFailed,
  crashLoopTold,
  crashLoopToTell,
  heldReleased,
  heldStart,
  interruptedOutcome,
  interruptOfStart,
  queryOpened,
  queryOpening,
  refusalNoted,
  toolsOffTold,
  turnBegun,
  turnHeld,
  turnSettled,
  turnSteered,
} from './turn-state.js';
import { decideTurn } from './turn-policy.js';

/** How long a held bot-only turn waits for its run_started to come back before it starts anyway. */
const HELD_TURN_MAX_MS = 5_000;

export interface TurnStarterHooks {
  /** Between turns: settle, start the next one, or arm the idle close. */
  whenIdle: () => void;
  /** Arms the wake-up for a message that never finished. */
  armStale: () => void;
  /** A turn starts: the idle close is off. */
  clearIdle: () => void;
}

/**
 * Turns what was written into Claude's turns: drains the buffer, leaves out
 * what the thread says was answered, decides whether to answer, holds a
 * bot-only turn until the thread's order is known, and gives the turn to the
 * live query or a new one. Mid-turn, it steers what is written into the
 * running turn. When Claude fails to start, the next start waits.
 */
export class TurnStarter {
  readonly #parts: SessionParts;
  readonly #hooks: TurnStarterHooks;
  readonly #isolation: ToolIsolation;
  readonly #heldTimer: OneShotTimer;
  readonly #retryTimer: OneShotTimer;

  constructor(parts: SessionParts, hooks: TurnStarterHooks, isolation: ToolIsolation) {
    this.#parts = parts;
    this.#hooks = hooks;
    this.#isolation = isolation;
    this.#heldTimer = new OneShotTimer(parts.clock);
    this.#retryTimer = new OneShotTimer(parts.clock);
  }

  /** Starts a turn if one is due, unless one is starting; mid-turn, steers what was written into it. */
  tryStart(): void {
    const parts = this.#parts;
    const { log, output } = parts;
    if (parts.turn.stopped || parts.turn.starting) return;
    if (!output.isIdle) {
      const live = parts.query.live;
      if (parts.config.turns.steer && live) this.#steer(live);
      return;
    }
    if (parts.clock.now() < parts.turn.restarts.retryAt) {
      // Claude failed a moment ago: what is written meanwhile waits in the buffer for the next start.
      this.#armRetry();
      return;
    }
    const payload = this.#take();
    if (!payload) return;
    if (!parts.admission.admitted) {
      if (!parts.turn.refusalLogged) {
        log.warn(
          { seqs: payload.consumedSeqs },
          'none of my owners is on this thread and only they may add me here: ignoring its messages',
        );
        parts.turn = refusalNoted(parts.turn, true);
      }
      return;
    }
    parts.turn = refusalNoted(parts.turn, false);
    const decision = this.#decide(payload);
    if (!decision.answer) {
      if (payload.text !== '') log.info({ seqs: payload.consumedSeqs, reason: decision.reason }, 'turn not answered');
      return;
    }
    this.#tellToolsOff();
    const runId = `run-${randomUUID()}`;
    const uuid = randomUUID();
    parts.ledger.noteAnswered(payload.replyTo);
    parts.turn = turnBegun(parts.turn, { seqs: payload.consumedSeqs, at: parts.clock.now() });
    this.#hooks.clearIdle();
    const begun = output.beginRun({ runId, replyTo: [...payload.replyTo], userMessageUuid: uuid });
    if (decision.botOnly) {
      // Another bot may take a bot-only turn at the same moment: the thread's order decides. The prompt waits
      // until this run_started comes back, when every turn before it has been counted (releaseHeld).
      parts.turn = turnHeld(parts.turn, { runId, uuid, payload });
      parts.outbound.send(begun.threadId, begun.events);
      this.#heldTimer.arm(HELD_TURN_MAX_MS, () => this.releaseHeld(runId, true));
      log.info({ runId, replyTo: payload.replyTo }, 'bot-only turn waits for its place on the thread');
      return;
    }
    parts.ledger.countBotTurn(parts.selfId, runId, payload.replyTo);
    this.#launch(runId, uuid, payload, begun);
  }

  /** An event of the thread: the bot's own run_started of a held turn releases it. */
  observe(event: EventEnvelope): void {
    const held = heldStart(this.#parts.turn);
    if (
      held &&
      event.principalId === this.#parts.selfId &&
      event.type === 'run_started' &&
      event.data.runId === held.runId
    )
      this.releaseHeld(held.runId);
  }

  /**
   * A held bot-only turn's run_started is on the thread (or did not come back in time): every bot turn
   * before it is counted now. Over the limit, the run closes without a word; else Claude gets the prompt.
   */
  releaseHeld(runId: string, timedOut = false): void {
    const parts = this.#parts;
    const held = heldStart(parts.turn);
    if (held?.runId !== runId) return;
    this.dropHeld();
    // Closed meanwhile (the CLI died, the bot stops): nothing to start.
    if (parts.output.currentRunId !== runId) return;
    const max = parts.config.turns.maxBotOnlyTurns;
    const streak = parts.ledger.botOnlyStreak;
    // Back from the server, the streak counts this run too; not back in time, it counts the turns seen so far.
    if (timedOut ? streak >= max : streak > max) {
      parts.log.info({ runId, seqs: held.payload.consumedSeqs, reason: 'bot_only_limit', streak }, 'turn not answered');
      parts.outbound.send(
        parts.threadId,
        parts.output.finishRun(runId, {
          status: 'interrupted',
          interruptReason: `loop guard: ${max} bot-only turns in a row on this thread`,
        }),
      );
      this.#hooks.whenIdle();
      return;
    }
    if (held.interrupt) {
      parts.outbound.send(parts.threadId, parts.output.finishRun(runId, interruptedOutcome(held.interrupt)));
      this.#hooks.whenIdle();
      return;
    }
    this.#launch(runId, held.uuid, held.payload);
  }

  /** The held turn, if any, stops waiting (it is released, or was closed with the rest). */
  dropHeld(): void {
    this.#heldTimer.clear();
    this.#parts.turn = heldReleased(this.#parts.turn);
  }

  /** Claude failed to start or died: the next start waits, doubling each time, and the thread hears once when it keeps failing. */
  noteFailure(reason: string): void {
    const parts = this.#parts;
    const maxSeconds = parts.config.limits.restartBackoffMaxSeconds;
    const at = parts.clock.now();
    parts.turn = claudeFailed(parts.turn, { at, maxDelayMs: maxSeconds * 1000 });
    const { failures, retryAt } = parts.turn.restarts;
    parts.log.warn({ failures, delayMs: retryAt - at }, 'Claude failed; waiting before starting it again');
    if (crashLoopToTell(parts.turn)) {
      parts.turn = crashLoopTold(parts.turn);
      this.#notice(crashLoopText(failures, reason, maxSeconds));
    }
    this.#armRetry();
  }

  /** The session stops: nothing wakes it any more. */
  stop(): void {
    this.#heldTimer.clear();
    this.#retryTimer.clear();
  }

  /** Gives a begun turn to Claude: the live query, or a new one (which may wait for a CLI slot). */
  #launch(runId: string, uuid: string, payload: DrainPayload, begun?: Delivery): void {
    const parts = this.#parts;
    const { log, output } = parts;
    // Attributed when it goes to the CLI: names learned while a new query waits for its slot count.
    const prompt = () => parts.people.promptContent(payload.parts);
    const live = parts.query.live;
    if (live) {
      // Warm: the CLI gets the words first (its turn is the long pole); run_started goes out while it works.
      live.push(prompt(), { uuid });
      if (begun) parts.outbound.send(begun.threadId, begun.events);
      log.info({ runId, replyTo: payload.replyTo }, 'turn starts');
      return;
    }
    if (begun) parts.outbound.send(begun.threadId, begun.events);
    log.info({ runId, replyTo: payload.replyTo }, 'turn starts');
    parts.turn = queryOpening(parts.turn, runId);
    void parts.query
      .ensure()
      .then((query) => {
        const interrupt = interruptOfStart(parts.turn, runId);
        if (!interrupt) {
          query.push(prompt(), { uuid });
          return;
        }
        // Interrupted before it started: Claude still gets the words as context, without a turn.
        output.noteSteer(uuid);
        query.push(prompt(), { uuid, shouldQuery: false });
        parts.outbound.send(parts.threadId, output.finishRun(runId, interruptedOutcome(interrupt)));
        log.info({ runId, by: interrupt.by }, 'turn interrupted before it started');
      })
      .catch((error: unknown) => {
        log.error({ err: error, runId }, 'could not start the Claude query');
        parts.sender.send(
          output.closeAll({
            status: 'error',
            error: { code: 'engine_start_failed', message: 'Claude could not be started.' },
          }),
        );
        parts.turn = turnSettled(parts.turn);
        this.noteFailure(error instanceof Error ? error.message : String(error));
      })
      .finally(() => {
        parts.turn = queryOpened(parts.turn, runId);
        if (output.isIdle) this.#hooks.whenIdle();
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
  #steer(query: LiveQuery): void {
    const parts = this.#parts;
    const { log, output } = parts;
    const payload = this.#take();
    if (!payload) return;
    if (!parts.admission.admitted) {
      log.warn(
        { seqs: payload.consumedSeqs },
        'none of my owners is on this thread any more: not steering its messages into the turn',
      );
      return;
    }
    parts.turn = turnSteered(parts.turn, payload.consumedSeqs);
    if (payload.text === '') return;
    const uuid = randomUUID();
    const decision = this.#decide(payload);
    // Bots' words alone are context too: a bot-only turn starts only where the thread's order can be checked
    // first (releaseHeld), which a turn the CLI runs by itself after this one does not allow.
    if (!decision.answer || decision.botOnly) {
      const reason = decision.answer ? 'bot_only_aside' : decision.reason;
      log.info(
        { runId: output.currentRunId, seqs: payload.consumedSeqs, reason },
        'steering the running turn (as context, not to be answered)',
      );
      output.noteSteer(uuid);
      query.push(parts.people.promptContent(payload.parts), { uuid, shouldQuery: false });
      return;
    }
    log.info(
      { runId: output.currentRunId, seqs: payload.consumedSeqs, replyTo: payload.replyTo },
      'steering the running turn',
    );
    output.noteAside(uuid, payload.replyTo);
    query.push(parts.people.promptContent(payload.parts), { uuid });
  }

  /** Whether to answer a drained payload: respondTo, and the thread's bot-only streak whichever bots took it. */
  #decide(payload: DrainPayload) {
    const { config, people, ledger, selfId } = this.#parts;
    return decideTurn({
      parts: payload.parts,
      respondTo: config.turns.respondTo,
      selfId,
      selfDisplayName: people.selfDisplayName,
      isBot: (p) => people.isBot(p),
      botOnlyStreak: ledger.botOnlyStreak,
      maxBotOnlyTurns: config.turns.maxBotOnlyTurns,
    });
  }

  /**
   * Drains the buffer (finished runs, and runs gone quiet for `turns.staleRunSeconds`)
   * and leaves out what one of the bot's runs already answered (a replay after a restart).
   */
  #take(): DrainPayload | undefined {
    const { drain, ledger, log, clock, config } = this.#parts;
    const raw = drain.drain(clock.now());
    if (!raw) return undefined;
    if (raw.stale.length > 0) {
      log.info(
        { runs: raw.stale, staleRunSeconds: config.turns.staleRunSeconds },
        'a message never finished and its author went quiet: taking it as it stands',
      );
    }
    const parts = raw.parts.filter((part) => !ledger.answered(part.seqs));
    const replyTo = raw.replyTo.filter((seq) => !ledger.answered([seq]));
    if (parts.length === raw.parts.length && replyTo.length === raw.replyTo.length) return raw;
    log.info(
      { seqs: raw.replyTo.filter((seq) => !replyTo.includes(seq)) },
      'already answered (the thread says so): not answering again',
    );
    return { ...raw, parts, replyTo, text: formatDrainText(parts) };
  }

  #armRetry(): void {
    const { turn, clock } = this.#parts;
    if (this.#retryTimer.armed || turn.stopped) return;
    this.#retryTimer.arm(Math.max(0, turn.restarts.retryAt - clock.now()), () => {
      this.tryStart();
      this.#hooks.armStale();
    });
  }

  /** Where the sandbox cannot start, the first turn of each thread says that tools are off, and why. */
  #tellToolsOff(): void {
    const isolation = this.#isolation;
    if (isolation.kind !== 'unavailable' || this.#parts.turn.toolsOffTold) return;
    this.#parts.turn = toolsOffTold(this.#parts.turn);
    this.#notice(toolsOffText(isolation.reason));
  }

  /** A short run of the bot's own that says something about itself. */
  #notice(text: string): void {
    this.#parts.outbound.send(this.#parts.threadId, noticeEvents(`notice-${randomUUID()}`, text));
  }
}
