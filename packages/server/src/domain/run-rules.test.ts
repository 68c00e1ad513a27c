import { describe, expect, it } from 'vitest';
import { decideRunEvent, type RunState } from './run-rules.js';

const open: RunState = { ownerPrincipalId: 'bot-a', started: true, finished: false };
const bare: RunState = { ownerPrincipalId: 'bot-a', started: false, finished: false };
const closed: RunState = { ownerPrincipalId: 'bot-a', started: true, finished: true };

describe('decideRunEvent', () => {
  const table: Array<[string, 'run_started' | 'message_part' | 'run_finished', string, RunState | null, string]> = [
    ['first run_started claims the run', 'run_started', 'bot-a', null, 'ok'],
    ['first message_part claims a bare-delta run', 'message_part', 'bot-a', null, 'ok'],
    ['run_finished with no start is allowed', 'run_finished', 'bot-a', null, 'ok'],
    ['second run_started', 'run_started', 'bot-a', open, 'conflict'],
    ['run_started after a bare part', 'run_started', 'bot-a', bare, 'ok'],
    ['part in an open run', 'message_part', 'bot-a', open, 'ok'],
    ['part after finish', 'message_part', 'bot-a', closed, 'conflict'],
    ['start after finish', 'run_started', 'bot-a', closed, 'conflict'],
    ['second finish', 'run_finished', 'bot-a', closed, 'conflict'],
    ['someone else starts', 'run_started', 'bot-b', open, 'forbidden'],
    ['someone else writes a part', 'message_part', 'bot-b', bare, 'forbidden'],
    ['someone else finishes', 'run_finished', 'bot-b', open, 'forbidden'],
    ['someone else after finish is still forbidden', 'message_part', 'bot-b', closed, 'forbidden'],
  ];
  it.each(table)('%s', (_name, type, who, state, expected) => {
    const decision = decideRunEvent(type, 'r1', who, state);
    expect(decision.ok ? 'ok' : decision.code).toBe(expected);
  });

  it('tracks the state forward', () => {
    const a = decideRunEvent('run_started', 'r1', 'bot-a', null);
    expect(a).toEqual({ ok: true, next: { ownerPrincipalId: 'bot-a', started: true, finished: false } });
    const b = decideRunEvent('run_finished', 'r1', 'bot-a', open);
    expect(b).toEqual({ ok: true, next: { ownerPrincipalId: 'bot-a', started: true, finished: true } });
  });
});
