import type { DrainPayload } from '@bubble/sdk';
import { describe, expect, it } from 'vitest';
import type { BubbleEventDraft } from '../translate/bubble-draft.js';
import {
  answeredAway,
  awayAnswersTaken,
  claudeFailed,
  crashLoopTold,
  crashLoopToTell,
  eventSeen,
  firstTextDeltas,
  heldReleased,
  heldStart,
  initialTurnState,
  interruptAsked,
  interruptBeforeStart,
  interruptedOutcome,
  interruptNote,
  interruptOfStart,
  queryOpened,
  queryOpening,
  refusalNoted,
  runFinished,
  sessionStopped,
  textStarted,
  toolsOffTold,
  turnBegun,
  turnHeld,
  turnSettled,
  turnSteered,
  type TurnState,
} from './turn-state.js';

/** Frozen all the way down: a transition that mutated its input would throw. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) frozen(inner);
  }
  return value;
}

const start = (): TurnState => frozen(structuredClone(initialTurnState));
const payload = { consumedSeqs: [4, 5], parts: [], replyTo: [5], text: 'hi' } as unknown as DrainPayload;
const stop = { runId: 'run-1', by: 'alice', reason: 'enough' };

describe('turn state', () => {
  it('starts with nothing under way', () => {
    expect(initialTurnState).toMatchObject({ stopped: false, starting: undefined, seqs: [], lastSeq: 0 });
    expect(initialTurnState.restarts).toEqual({ failures: 0, retryAt: 0, told: false });
  });

  it('a turn holds back the seqs it consumed, and what was steered into it, until it settles', () => {
    let state = eventSeen(start(), 7);
    state = frozen(turnBegun(state, { seqs: [4, 5], at: 100 }));
    state = frozen(turnSteered(state, [6, 7]));
    expect(state).toMatchObject({ seqs: [4, 5, 6, 7], lastSeq: 7, lastActiveAt: 100 });
    const settled = turnSettled(state);
    expect(settled.seqs).toEqual([]);
    expect(turnSettled(settled)).toBe(settled);
  });

  it('a held bot-only turn is the pending start until it is released; an opening one is not dropped with it', () => {
    const held = frozen(turnHeld(start(), { runId: 'run-1', uuid: 'u-1', payload }));
    expect(heldStart(held)).toMatchObject({ kind: 'held', runId: 'run-1', uuid: 'u-1' });
    expect(heldReleased(held).starting).toBeUndefined();
    const opening = frozen(queryOpening(start(), 'run-2'));
    expect(heldStart(opening)).toBeUndefined();
    expect(heldReleased(opening)).toBe(opening);
  });

  it('the wait for a query ends only for its own run', () => {
    const opening = frozen(queryOpening(start(), 'run-1'));
    expect(opening.starting).toEqual({ kind: 'opening', runId: 'run-1' });
    expect(queryOpened(opening, 'run-other')).toBe(opening);
    expect(queryOpened(opening, 'run-1').starting).toBeUndefined();
  });

  it('an interrupt before the start rides on that start only', () => {
    const asked = frozen(interruptAsked(start(), stop));
    expect(asked.interrupted).toEqual(stop);
    expect(interruptBeforeStart(asked, stop)).toBe(asked);

    const opening = frozen(queryOpening(asked, 'run-1'));
    const interrupted = interruptBeforeStart(opening, stop);
    expect(interruptOfStart(interrupted, 'run-1')).toEqual(stop);
    expect(interruptOfStart(interrupted, 'run-2')).toBeUndefined();

    const other = frozen(queryOpening(asked, 'run-2'));
    expect(interruptBeforeStart(other, stop)).toBe(other);

    const held = frozen(turnHeld(asked, { runId: 'run-1', uuid: 'u', payload }));
    expect(heldStart(interruptBeforeStart(held, stop))?.interrupt).toEqual(stop);
  });

  it('answers given while the CLI was closed are kept in order, then taken together', () => {
    let state = frozen(answeredAway(start(), 'one'));
    state = frozen(answeredAway(state, 'two'));
    expect(state.awayAnswers).toEqual(['one', 'two']);
    expect(awayAnswersTaken(state).awayAnswers).toEqual([]);
  });

  it('failures in a row double the wait up to the maximum; the thread hears once per streak', () => {
    let state = start();
    const retryIn: number[] = [];
    const tells: boolean[] = [];
    for (let i = 0; i < 5; i += 1) {
      state = frozen(claudeFailed(state, { at: 10_000, maxDelayMs: 5_000 }));
      retryIn.push(state.restarts.retryAt - 10_000);
      const tell = crashLoopToTell(state);
      tells.push(tell);
      if (tell) state = frozen(crashLoopTold(state));
    }
    expect(retryIn).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(tells).toEqual([false, false, true, false, false]);

    const works = frozen(runFinished(state, 20_000));
    expect(works.restarts).toMatchObject({ failures: 0, told: false });
    expect(works.lastActiveAt).toBe(20_000);
    expect(crashLoopToTell(claudeFailed(works, { at: 0, maxDelayMs: 5_000 }))).toBe(false);
  });

  it('flags change once, and unchanged flags keep the same value', () => {
    const state = start();
    const refused = frozen(refusalNoted(state, true));
    expect(refused.refusalLogged).toBe(true);
    expect(refusalNoted(refused, true)).toBe(refused);
    expect(refusalNoted(refused, false).refusalLogged).toBe(false);
    expect(toolsOffTold(state).toolsOffTold).toBe(true);
  });

  it('stopping drops a start that waits', () => {
    const held = frozen(turnHeld(start(), { runId: 'run-1', uuid: 'u', payload }));
    expect(sessionStopped(held)).toMatchObject({ stopped: true, starting: undefined });
  });

  it('says how a run stopped without its CLI ends, and what the translator is told', () => {
    expect(interruptedOutcome(undefined)).toEqual({ status: 'interrupted' });
    expect(interruptedOutcome(stop)).toEqual({
      status: 'interrupted',
      interruptedBy: 'alice',
      interruptReason: 'enough',
    });
    expect(interruptedOutcome({ runId: 'r', by: 'bob' })).toEqual({ status: 'interrupted', interruptedBy: 'bob' });
    expect(interruptNote(stop)).toEqual({ by: 'alice', reason: 'enough' });
    expect(interruptNote({ runId: 'r', by: 'bob' })).toEqual({ by: 'bob' });
  });
});

describe('firstTextDeltas', () => {
  const part = (runId: string, chunk: Record<string, unknown>, n: number): BubbleEventDraft =>
    ({ type: 'message_part', data: { runId, chunk }, clientEventId: `${runId}:${n}` }) as BubbleEventDraft;
  const delta = (runId: string, n: number) => part(runId, { type: 'text-delta', id: 't', delta: 'x' }, n);

  it('finds a run’s first text delta by its chunk type, wherever its counter stands', () => {
    const events = [
      { type: 'run_started', data: { runId: 'run-1' }, clientEventId: 'run-1:0' } as BubbleEventDraft,
      part('run-1', { type: 'reasoning-start', id: 'r' }, 1),
      part('run-1', { type: 'reasoning-delta', id: 'r', delta: 'hm' }, 2),
      part('run-1', { type: 'text-start', id: 't' }, 3),
      delta('run-1', 4),
      delta('run-1', 5),
    ];
    expect(firstTextDeltas(start(), 'thread-a', [{ threadId: 'thread-a', events }])).toEqual(['run-1']);
  });

  it('skips a run whose words already came, other threads, and reports each new run once', () => {
    const state = frozen(textStarted(start(), 'run-1'));
    expect(
      firstTextDeltas(state, 'thread-a', [
        { threadId: 'thread-a', events: [delta('run-1', 6)] },
        { threadId: 'child', events: [delta('run-child', 2)] },
        { threadId: 'thread-a', events: [delta('run-2', 2), delta('run-2', 3)] },
      ]),
    ).toEqual(['run-2']);
    expect(firstTextDeltas(state, 'thread-a', [{ threadId: 'thread-a', events: [delta('run-1', 9)] }])).toEqual([]);
  });
});
