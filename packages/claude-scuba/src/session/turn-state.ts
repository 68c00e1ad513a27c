import type { DrainPayload } from '@bubble/sdk';
import type { InterruptNote, RunOutcome } from '../translate/run-outcome.js';
import type { Delivery } from './subagent-registry.js';

/**
 * What one thread's session knows about its turns, as one value. Every change
 * is a named transition below that returns a new value (the old one is never
 * mutated), so the session holds exactly one mutable reference to it. Pure:
 * times come in as arguments.
 */
export interface TurnState {
  /** The session stops: no turn starts any more. */
  readonly stopped: boolean;
  /** A turn begun on the thread that no CLI has taken yet. */
  readonly starting: PendingStart | undefined;
  /** The seqs the current turn consumed: the checkpoint stays below them until the turn ends. */
  readonly seqs: readonly number[];
  /** The last seq seen on the thread. */
  readonly lastSeq: number;
  /** The last interrupt asked of this thread's own run, credited when the run ends without its CLI. */
  readonly interrupted: Interrupt | undefined;
  /** What people answered to calls parked while their CLI was closed, told to Claude together on resume. */
  readonly awayAnswers: readonly string[];
  /** Claude failing to start or dying, in a row. */
  readonly restarts: Restarts;
  /** When a turn last started or finished (least recently used eviction). */
  readonly lastActiveAt: number;
  /** The last run of this thread whose first text delta went out (latency tracing). */
  readonly textStartedIn: string | undefined;
  /** The bot refuses to work here (no owner on the thread) and has said so in its log. */
  readonly refusalLogged: boolean;
  /** The thread was told that tools are off (the sandbox cannot start). */
  readonly toolsOffTold: boolean;
}

/** Who asked to stop which run, and why. */
export interface Interrupt {
  readonly runId: string;
  readonly by: string;
  readonly reason?: string;
}

/** What the translator is told of an interrupt (who asked, and why). */
export function interruptNote(interrupt: Interrupt): InterruptNote {
  return { by: interrupt.by, reason: interrupt.reason };
}

/** How a run ends that was stopped without its CLI: interrupted, crediting who asked when that is known. */
export function interruptedOutcome(interrupt: Interrupt | undefined): RunOutcome {
  if (!interrupt) return { status: 'interrupted' };
  return {
    status: 'interrupted',
    interruptedBy: interrupt.by,
    ...(interrupt.reason !== undefined ? { interruptReason: interrupt.reason } : {}),
  };
}

/**
 * A turn whose run_started is out but that no CLI has yet. An interrupt asked
 * meanwhile rides along (`interrupt`): the turn ends where it would have started.
 */
export type PendingStart = HeldStart | OpeningStart;

/** A bot-only turn waiting for its run_started to come back, so that the thread's order decides (the loop guard). */
export interface HeldStart {
  readonly kind: 'held';
  readonly runId: string;
  /** The uuid the prompt will carry. */
  readonly uuid: string;
  readonly payload: DrainPayload;
  readonly interrupt?: Interrupt;
}

/** A turn, or a resume of one, waiting for its query to open (perhaps for a CLI slot first). */
export interface OpeningStart {
  readonly kind: 'opening';
  readonly runId: string;
  readonly interrupt?: Interrupt;
}

/** The next start waits until `retryAt`; the thread hears once (`told`) when Claude keeps failing. */
export interface Restarts {
  readonly failures: number;
  readonly retryAt: number;
  readonly told: boolean;
}

/** The first wait before Claude is started again after it failed; it doubles up to the configured maximum. */
export const RESTART_BASE_MS = 1_000;
/** Failures in a row after which the thread is told, once, that Claude keeps failing. */
export const CRASH_LOOP_TELL_AFTER = 3;

export const initialTurnState: TurnState = {
  stopped: false,
  starting: undefined,
  seqs: [],
  lastSeq: 0,
  interrupted: undefined,
  awayAnswers: [],
  restarts: { failures: 0, retryAt: 0, told: false },
  lastActiveAt: 0,
  textStartedIn: undefined,
  refusalLogged: false,
  toolsOffTold: false,
};

/** An event of the thread was handled. */
export function eventSeen(state: TurnState, seq: number): TurnState {
  return { ...state, lastSeq: seq };
}

/** A turn begins on the thread with what it consumed. */
export function turnBegun(state: TurnState, turn: { seqs: readonly number[]; at: number }): TurnState {
  return { ...state, seqs: [...turn.seqs], lastActiveAt: turn.at };
}

/** The begun turn is bot-only: it waits for its run_started to come back before Claude gets it. */
export function turnHeld(state: TurnState, held: { runId: string; uuid: string; payload: DrainPayload }): TurnState {
  return { ...state, starting: { kind: 'held', ...held } };
}

/** The held turn stops waiting (it came back, timed out, or was closed with the rest). */
export function heldReleased(state: TurnState): TurnState {
  return state.starting?.kind === 'held' ? { ...state, starting: undefined } : state;
}

/** The turn of `runId` (a new one, or one resumed) waits for its query to open. */
export function queryOpening(state: TurnState, runId: string): TurnState {
  return { ...state, starting: { kind: 'opening', runId } };
}

/** The wait for `runId`'s query is over, however it went. */
export function queryOpened(state: TurnState, runId: string): TurnState {
  return state.starting?.kind === 'opening' && state.starting.runId === runId
    ? { ...state, starting: undefined }
    : state;
}

/** What was written meanwhile went into the running turn. */
export function turnSteered(state: TurnState, seqs: readonly number[]): TurnState {
  return { ...state, seqs: [...state.seqs, ...seqs] };
}

/** Between turns (or the turn failed): nothing consumed waits any more. */
export function turnSettled(state: TurnState): TurnState {
  return state.seqs.length === 0 ? state : { ...state, seqs: [] };
}

/** Someone asked to stop this thread's run. */
export function interruptAsked(state: TurnState, interrupt: Interrupt): TurnState {
  return { ...state, interrupted: interrupt };
}

/** ...while the run had no CLI yet: it ends where it would have started. Another run's start is left alone. */
export function interruptBeforeStart(state: TurnState, interrupt: Interrupt): TurnState {
  const starting = state.starting;
  if (starting?.runId !== interrupt.runId) return state;
  return { ...state, starting: { ...starting, interrupt } };
}

/** A call parked while its CLI was closed was answered. */
export function answeredAway(state: TurnState, answer: string): TurnState {
  return { ...state, awayAnswers: [...state.awayAnswers, answer] };
}

/** The answers were taken: told to Claude on resume, or dropped with the run. */
export function awayAnswersTaken(state: TurnState): TurnState {
  return state.awayAnswers.length === 0 ? state : { ...state, awayAnswers: [] };
}

/** Claude failed to start or died: the next start waits, twice as long each time, at most `maxDelayMs`. */
export function claudeFailed(state: TurnState, failure: { at: number; maxDelayMs: number }): TurnState {
  const failures = state.restarts.failures + 1;
  const delayMs = Math.min(failure.maxDelayMs, RESTART_BASE_MS * 2 ** (failures - 1));
  return { ...state, restarts: { ...state.restarts, failures, retryAt: failure.at + delayMs } };
}

/** Whether the thread is to hear now that Claude keeps failing (once per streak of failures). */
export function crashLoopToTell(state: TurnState): boolean {
  return state.restarts.failures >= CRASH_LOOP_TELL_AFTER && !state.restarts.told;
}

/** The thread was told that Claude keeps failing. */
export function crashLoopTold(state: TurnState): TurnState {
  return { ...state, restarts: { ...state.restarts, told: true } };
}

/** A run finished with a result: the CLI works. */
export function runFinished(state: TurnState, at: number): TurnState {
  return { ...state, lastActiveAt: at, restarts: { ...state.restarts, failures: 0, told: false } };
}

/** The first text delta of `runId` went out. */
export function textStarted(state: TurnState, runId: string): TurnState {
  return { ...state, textStartedIn: runId };
}

/** The bot refused to work here and logged it (true), or works here again (false). */
export function refusalNoted(state: TurnState, logged: boolean): TurnState {
  return state.refusalLogged === logged ? state : { ...state, refusalLogged: logged };
}

/** The thread was told that tools are off. */
export function toolsOffTold(state: TurnState): TurnState {
  return { ...state, toolsOffTold: true };
}

/** The session stops: no turn starts, and one waiting to start is dropped. */
export function sessionStopped(state: TurnState): TurnState {
  return { ...state, stopped: true, starting: undefined };
}

/** The bot-only turn held for its place, if one is. */
export function heldStart(state: TurnState): HeldStart | undefined {
  return state.starting?.kind === 'held' ? state.starting : undefined;
}

/** The interrupt that `runId`'s pending start carries, if it is pending and was asked to stop. */
export function interruptOfStart(state: TurnState, runId: string): Interrupt | undefined {
  return state.starting?.runId === runId ? state.starting.interrupt : undefined;
}

/**
 * The runs of `threadId` whose first text delta is in these deliveries (found by
 * what it is: the first `text-delta` chunk of a run), given the last run that had one.
 */
export function firstTextDeltas(
  state: TurnState,
  threadId: string,
  deliveries: readonly Pick<Delivery, 'threadId' | 'events'>[],
): string[] {
  const runs: string[] = [];
  let last = state.textStartedIn;
  for (const delivery of deliveries) {
    if (delivery.threadId !== threadId) continue;
    for (const event of delivery.events) {
      if (event.type !== 'message_part' || event.data.chunk.type !== 'text-delta' || event.data.runId === last)
        continue;
      last = event.data.runId;
      runs.push(last);
    }
  }
  return runs;
}
