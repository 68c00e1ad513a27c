import type { EventEnvelope } from '@bubble/protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { ev, part, resetSeq } from './__fixtures__/fixtures.js';
import { answerCounts } from './approver-rule.js';
import { foldEvents } from './fold-thread.js';
import {
  approvalOf,
  approvalRequestOf,
  mayApprove,
  subagentRequests,
  suppliedResultOf,
  waitingRequestOf,
  waitingToolCalls,
} from './tool-approvals.js';

beforeEach(resetSeq);

const bots = new Set(['bot', 'other-bot']);
const isBot = (id: string) => bots.has(id);
const ask = (runId: string, toolCallId: string, approvers: string[], by = 'bot', extra: Record<string, unknown> = {}) =>
  part(
    runId,
    {
      type: 'tool-approval-request',
      approvalId: toolCallId,
      toolCallId,
      providerMetadata: { bubble: { approvers, ...extra } },
    },
    by,
  );
const call = (runId: string, toolCallId: string) =>
  part(runId, { type: 'tool-input-available', toolCallId, toolName: 'Bash', input: {}, dynamic: true });
const answer = (toolCallId: string, by: string, decision: 'allow' | 'deny' = 'allow') =>
  ev('tool_call_approval', { toolCallId, decision }, by);
const joined = (principalId: string) => ev('participant_added', { principalId, role: 'member', by: 'alice' }, 'system');

describe('answerCounts, the approver rule', () => {
  const request = { toolCallId: 'c', by: 'bot', runId: 'r', seq: 1, approvers: ['alice'] };
  it.each<[string, string, boolean]>([
    ['a named approver', 'alice', true],
    ['the bot that asked (its own automatic denial)', 'bot', true],
    ['anyone else', 'mallory', false],
  ])('%s: %s', (_name, by, counts) => {
    expect(answerCounts(request, by)).toBe(counts);
  });
  it('counts any answer to a call nobody parked', () => {
    expect(answerCounts(undefined, 'mallory')).toBe(true);
  });
});

describe('reading tool approvals from the fold', () => {
  it('waits for announced calls only, until answered, supplied or the run ends', () => {
    const events: EventEnvelope[] = [
      joined('alice'),
      ev('run_started', { runId: 'r' }),
      call('r', 'a'),
      call('r', 'b'),
      call('r', 'quiet'),
      ask('r', 'a', ['alice']),
      ask('r', 'b', ['alice', 'ann']),
    ];
    let state = foldEvents(events);
    expect(waitingToolCalls(state, isBot)).toEqual([
      { runId: 'r', toolCallId: 'a', toolName: 'Bash', approvers: ['alice'] },
      { runId: 'r', toolCallId: 'b', toolName: 'Bash', approvers: ['alice', 'ann'] },
    ]);
    expect([mayApprove(state, 'a', 'alice', isBot), mayApprove(state, 'quiet', 'alice', isBot)]).toEqual([true, false]);
    // Ann is named but holds no grant here: no buttons for her.
    expect(mayApprove(state, 'b', 'ann', isBot)).toBe(false);
    state = foldEvents(
      [answer('a', 'alice', 'deny'), ev('tool_call_result', { toolCallId: 'b', output: 'x' }, 'alice')],
      state,
    );
    expect(waitingToolCalls(state, isBot)).toEqual([]);
    expect(approvalOf(state, 'a', isBot)).toEqual({ toolCallId: 'a', decision: 'deny', by: 'alice', seq: 8 });
    expect(suppliedResultOf(state, 'b', isBot)).toMatchObject({ by: 'alice', isError: false });
    expect(mayApprove(state, 'a', 'alice', isBot)).toBe(false);
  });

  it('stops waiting when the run that asked ends', () => {
    const state = foldEvents([
      joined('alice'),
      ev('run_started', { runId: 'r' }),
      call('r', 'a'),
      ask('r', 'a', ['alice']),
      ev('run_finished', { runId: 'r', status: 'interrupted' }),
    ]);
    expect(waitingRequestOf(state, 'a', isBot)).toBeUndefined();
  });

  it("trusts only a bot's request, none when two bots claim one call, and only the named approvers' answers", () => {
    let state = foldEvents([
      joined('you'),
      joined('mallory'),
      ev('run_started', { runId: 'forged' }, 'mallory'),
      ask('forged', 'x', ['you'], 'mallory'),
      ev('run_started', { runId: 'real' }),
      ask('real', 'y', ['you']),
      ev('run_started', { runId: 'rival' }, 'other-bot'),
      ask('rival', 'y', ['you'], 'other-bot'),
      ask('real', 'z', ['you']),
    ]);
    expect([approvalRequestOf(state, 'x', isBot), approvalRequestOf(state, 'y', isBot)]).toEqual([
      undefined,
      undefined,
    ]);
    expect(waitingToolCalls(state, isBot).map((w) => w.toolCallId)).toEqual(['z']);
    state = foldEvents([answer('z', 'mallory')], state);
    expect(approvalOf(state, 'z', isBot)).toBeUndefined();
    expect(mayApprove(state, 'z', 'mallory', isBot)).toBe(false);
    expect(mayApprove(state, 'z', 'you', isBot)).toBe(true);
    state = foldEvents([answer('z', 'bot', 'deny')], state);
    expect(approvalOf(state, 'z', isBot)).toMatchObject({ by: 'bot', decision: 'deny' });
  });

  it("lists a sub-agent's requests under the run that carries them; a kind learned later changes what counts", () => {
    const state = foldEvents([
      joined('you'),
      ev('run_started', { runId: 'approval-s1' }),
      ask('approval-s1', 's1', ['you'], 'bot', { threadId: 'th_1.sub-abcde-123', toolName: 'Bash', input: { c: 1 } }),
    ]);
    expect(subagentRequests(state, 'approval-s1', isBot)).toEqual([
      {
        toolCallId: 's1',
        by: 'bot',
        runId: 'approval-s1',
        seq: 3,
        approvers: ['you'],
        subthreadId: 'th_1.sub-abcde-123',
        toolName: 'Bash',
        input: { c: 1 },
      },
    ]);
    expect(waitingToolCalls(state, isBot)).toEqual([
      { runId: 'approval-s1', toolCallId: 's1', toolName: 'Bash', approvers: ['you'] },
    ]);
    // Until the client knows `bot` is a bot, its request counts for nothing.
    expect(subagentRequests(state, 'approval-s1', () => false)).toEqual([]);
  });
});
