import { assertNever } from '@bubble/protocol';
import { conflict, forbidden } from '../errors/bubble-error.js';

/**
 * The run rules of the protocol, as a pure decision over the state the store
 * loaded. A `runId` belongs to the first principal that uses it on a thread; a
 * run is opened at most once and closed at most once.
 */
export interface RunState {
  ownerPrincipalId: string;
  started: boolean;
  finished: boolean;
}

export type RunDecision = { ok: true; next: RunState } | { ok: false; code: 'forbidden' | 'conflict'; message: string };

/** Event types that carry a run id and are bound by the ownership rules. */
export const RUN_BOUND_TYPES: ReadonlySet<string> = new Set(['run_started', 'message_part', 'run_finished']);

export function decideRunEvent(
  type: 'run_started' | 'message_part' | 'run_finished',
  runId: string,
  principalId: string,
  state: RunState | null,
): RunDecision {
  if (state !== null && state.ownerPrincipalId !== principalId) {
    return { ok: false, code: 'forbidden', message: `run ${runId} belongs to another principal` };
  }
  if (state?.finished) {
    return { ok: false, code: 'conflict', message: `run ${runId} is already finished` };
  }
  const current: RunState = state ?? { ownerPrincipalId: principalId, started: false, finished: false };
  switch (type) {
    case 'run_started':
      if (current.started) return { ok: false, code: 'conflict', message: `run ${runId} is already started` };
      return { ok: true, next: { ...current, started: true } };
    case 'message_part':
      return { ok: true, next: current };
    case 'run_finished':
      return { ok: true, next: { ...current, finished: true } };
    default:
      return assertNever(type, 'run event type');
  }
}

/** A run as one append batch has left it: its state, and whether the batch changed what is stored. */
export interface RunStep {
  state: RunState;
  changed: boolean;
}

/**
 * The next step of one run for the `index`-th event of a batch, both stores' one path: the
 * decision, thrown as the answer (403 or 409, naming the event) when the rules refuse it.
 * `previous` is the run's step earlier in the same batch, `state` what the batch starts from.
 */
export function stepRun(
  type: 'run_started' | 'message_part' | 'run_finished',
  runId: string,
  principalId: string,
  state: RunState | null,
  previous: RunStep | undefined,
  index: number,
): RunStep {
  const decision = decideRunEvent(type, runId, principalId, state);
  if (!decision.ok) {
    throw decision.code === 'forbidden'
      ? forbidden(decision.message, { index, runId })
      : conflict(decision.message, { index, runId });
  }
  const changed =
    (previous?.changed ?? false) ||
    state === null ||
    state.started !== decision.next.started ||
    state.finished !== decision.next.finished;
  return { state: decision.next, changed };
}
