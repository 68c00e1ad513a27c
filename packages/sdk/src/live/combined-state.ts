import type { LiveState } from './live-options.js';

/**
 * The state of a live connection spread over several sockets, from theirs: the least live one
 * that is in use. `waiting` (one is down, its subscriptions wait for a reconnect) over
 * `connecting` over `ready`; `idle` only when every socket is (none has a subscription). A
 * `failed` or `closed` connection is that for all its sockets at once, decided by its owner.
 */
export function combinedState(states: readonly LiveState[]): LiveState {
  for (const state of ['failed', 'closed', 'waiting', 'connecting', 'ready'] as const)
    if (states.includes(state)) return state;
  return 'idle';
}
