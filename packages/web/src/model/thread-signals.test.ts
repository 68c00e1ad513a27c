import type { EventEnvelope } from '@bubble/protocol';
import { foldEvents, runsOf } from '@bubble/sdk/client';
import { describe, expect, it } from 'vitest';
import { tabTitle, threadSignals, unreadMessages, usageLine, usageOf } from './thread-signals';

let seq = 0;
function ev(type: string, data: Record<string, unknown>, principalId: string): EventEnvelope {
  seq += 1;
  return {
    id: `ev_${seq}`,
    threadId: 'th_1',
    seq,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: '2026-11-29T10:00:00Z',
  } as EventEnvelope;
}
const message = (runId: string, who: string, text: string, extra: Record<string, unknown> = {}) => [
  ev('run_started', { runId }, who),
  ev('message_part', { runId, chunk: { type: 'text-start', id: 't' } }, who),
  ev('message_part', { runId, chunk: { type: 'text-delta', id: 't', delta: text } }, who),
  ev('message_part', { runId, chunk: { type: 'text-end', id: 't' } }, who),
  ev('run_finished', { runId, status: 'completed', ...extra }, who),
];

describe('thread signals', () => {
  it('counts messages by others whose text began after the cursor, not events', () => {
    seq = 0;
    const events = [
      ev('participant_added', { principalId: 'you', role: 'owner', by: 'system' }, 'system'),
      ...message('a', 'bot', 'seen'),
      ...message('b', 'you', 'mine'),
      ...message('c', 'bot', 'new one'),
      ev('acme.note', { n: 1 }, 'bot'),
      ...message('d', 'carol', 'another'),
    ];
    const state = foldEvents(events);
    const cursor = 11; // after "mine"
    expect(unreadMessages(state, cursor, 'you').map((r) => r.runId)).toEqual(['c', 'd']);
    const signals = threadSignals(state, { cursor, me: 'you', isBot: (id) => id === 'bot', windowStart: 1 });
    expect(signals).toEqual({ unread: 2, unreadAtLeast: false, approvalsForMe: 0 });
    // A custom event is no message: nothing unread after "another".
    expect(unreadMessages(state, seq, 'you')).toEqual([]);
  });

  it('marks an approval waiting for me, and only for the approvers the bot named', () => {
    seq = 0;
    const events = [
      ev('participant_added', { principalId: 'you', role: 'owner', by: 'system' }, 'system'),
      ev('participant_added', { principalId: 'bob', role: 'owner', by: 'you' }, 'system'),
      ev('run_started', { runId: 'r' }, 'bot'),
      ev(
        'message_part',
        {
          runId: 'r',
          chunk: { type: 'tool-input-available', toolCallId: 'c', toolName: 'Bash', input: {}, dynamic: true },
        },
        'bot',
      ),
      ev(
        'message_part',
        {
          runId: 'r',
          chunk: {
            type: 'tool-approval-request',
            approvalId: 'c',
            toolCallId: 'c',
            providerMetadata: { bubble: { approvers: ['you'] } },
          },
        },
        'bot',
      ),
    ];
    const state = foldEvents(events);
    const isBot = (id: string) => id === 'bot';
    expect(threadSignals(state, { cursor: 0, me: 'you', isBot, windowStart: 1 }).approvalsForMe).toBe(1);
    expect(threadSignals(state, { cursor: 0, me: 'bob', isBot, windowStart: 1 }).approvalsForMe).toBe(0);
    const answered = foldEvents([ev('tool_call_approval', { toolCallId: 'c', decision: 'allow' }, 'you')], state);
    expect(threadSignals(answered, { cursor: 0, me: 'you', isBot, windowStart: 1 }).approvalsForMe).toBe(0);
  });

  it('says approvals first in the tab title, then unread', () => {
    expect(tabTitle({ approvals: 1, unread: 3 })).toBe('(1) Approval waiting · Bubble');
    expect(tabTitle({ approvals: 2, unread: 0 })).toBe('(2) Approvals waiting · Bubble');
    expect(tabTitle({ approvals: 0, unread: 3 })).toBe('(3) Bubble');
    expect(tabTitle({ approvals: 0, unread: 0 })).toBe('Bubble');
  });

  it("sums each run's usage and cost for the thread", () => {
    seq = 0;
    const state = foldEvents([
      ...message('a', 'bot', 'x', { usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.015 } }),
      ...message('b', 'bot', 'y', {
        usage: { inputTokens: 800, cacheReadInputTokens: 1000, outputTokens: 40, costUsd: 0.01 },
      }),
      ...message('c', 'you', 'z'),
    ]);
    const total = usageOf(runsOf(state));
    expect(total).toEqual({ inputTokens: 3000, outputTokens: 340, costUsd: 0.025, runs: 2 });
    expect(usageLine(total!)).toBe('3.0k in · 340 out · $0.03');
  });
});
