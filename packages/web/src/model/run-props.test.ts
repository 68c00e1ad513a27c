import type { EventEnvelope } from '@bubble/protocol';
import { foldEvents, foldThread, runsOf, type ThreadState } from '@bubble/sdk/client';
import { describe, expect, it } from 'vitest';
import { callsByRun, callsOf, type RunProps, sameRunProps } from './run-props';

let seq = 0;
function ev(type: string, data: Record<string, unknown>, principalId = 'bot'): EventEnvelope {
  seq += 1;
  return {
    id: `ev_${seq}`,
    threadId: 'th_1',
    seq,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: '2026-12-01T10:00:00Z',
  };
}
const part = (runId: string, chunk: Record<string, unknown>, principalId = 'bot') =>
  ev('message_part', { runId, chunk }, principalId);

const actions = {};
function propsOf(state: ThreadState): Map<string, RunProps<typeof actions>> {
  const calls = callsByRun(state);
  return new Map(
    runsOf(state).map((run) => [
      run.runId,
      { run, mine: false, calls: callsOf(calls, run.runId), participants: state.participants, actions },
    ]),
  );
}

/** The runs a message view would draw again after `event`. */
function redrawn(state: ThreadState, event: EventEnvelope): string[] {
  const before = propsOf(state);
  const after = propsOf(foldThread(state, event));
  return [...after].filter(([runId, props]) => !sameRunProps(before.get(runId) ?? props, props)).map(([id]) => id);
}

describe('which messages are drawn again', () => {
  seq = 0;
  const state = foldEvents([
    ev('participant_added', { principalId: 'you', role: 'owner', by: 'you' }, 'system'),
    ev('run_started', { runId: 'question' }, 'you'),
    part('question', { type: 'text-start', id: 't' }, 'you'),
    ev('run_started', { runId: 'answer' }),
    part('answer', { type: 'tool-input-available', toolCallId: 'c', toolName: 'Bash', input: {} }),
    part('answer', {
      type: 'tool-approval-request',
      approvalId: 'c',
      toolCallId: 'c',
      providerMetadata: { bubble: { approvers: ['you'] } },
    }),
    ev('run_started', { runId: 'approval-s' }),
    part('approval-s', {
      type: 'tool-approval-request',
      approvalId: 's',
      toolCallId: 's',
      providerMetadata: { bubble: { approvers: ['you'], toolName: 'Bash', input: {}, threadId: 'th_1.sub-abcde-123' } },
    }),
    part('answer', { type: 'text-start', id: 'u' }),
  ]);

  it.each<[string, EventEnvelope, string[]]>([
    ['a delta: only its own message', part('answer', { type: 'text-delta', id: 'u', delta: 'hi' }), ['answer']],
    [
      "an answer to the bot's call: the message that shows it",
      ev('tool_call_approval', { toolCallId: 'c', decision: 'allow' }, 'you'),
      ['answer'],
    ],
    [
      "an answer to a sub-agent's call: the message that carries the request",
      ev('tool_call_approval', { toolCallId: 's', decision: 'deny' }, 'you'),
      ['approval-s'],
    ],
    [
      'someone joining: every message (who may approve changed)',
      ev('participant_added', { principalId: 'bob', role: 'member', by: 'you' }, 'system'),
      ['question', 'answer', 'approval-s'],
    ],
    ["an extension's event: none", ev('acme.poll_created', { q: 'lunch?' }, 'you'), []],
  ])('%s', (_name, event, runs) => {
    expect(redrawn(state, event)).toEqual(runs);
  });
});
