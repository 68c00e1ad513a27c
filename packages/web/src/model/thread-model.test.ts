import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { ThreadModel, toolPartOf } from './thread-model';

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
    createdAt: '2026-11-29T10:00:00Z',
  } as EventEnvelope;
}
const part = (runId: string, chunk: Record<string, unknown>, principalId = 'bot') =>
  ev('message_part', { runId, chunk }, principalId);

describe('ThreadModel', () => {
  it('assembles a run through readUIMessageStream: text, reasoning, tools, sub-agent link', async () => {
    seq = 0;
    const m = new ThreadModel('th_1');
    for (const e of [
      ev('participant_added', { principalId: 'you', role: 'owner', by: 'system' }, 'system'),
      ev('run_started', { runId: 'r1' }),
      part('r1', { type: 'reasoning-start', id: 'k' }),
      part('r1', { type: 'reasoning-delta', id: 'k', delta: 'thinking…' }),
      part('r1', { type: 'reasoning-end', id: 'k' }),
      part('r1', { type: 'text-start', id: 't' }),
      part('r1', { type: 'text-delta', id: 't', delta: 'Hello ' }),
      part('r1', { type: 'text-delta', id: 't', delta: '**world**' }),
      part('r1', { type: 'text-end', id: 't' }),
      part('r1', {
        type: 'tool-input-available',
        toolCallId: 'c1',
        toolName: 'Bash',
        input: { command: 'ls' },
        dynamic: true,
      }),
      part('r1', { type: 'tool-output-available', toolCallId: 'c1', output: 'a\nb', dynamic: true }),
      part('r1', {
        type: 'tool-input-available',
        toolCallId: 'c2',
        toolName: 'Agent',
        input: { prompt: 'x' },
        dynamic: true,
        providerMetadata: { bubble: { childThreadId: 'th_1.sub-abcde-123' } },
      }),
      ev('run_finished', { runId: 'r1', status: 'completed' }),
    ])
      m.apply(e);
    await m.settled();
    const run = m.run('r1')!;
    expect(run.status).toBe('completed');
    const parts = run.message.parts;
    expect(parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual([
      'Hello **world**',
    ]);
    expect(parts.filter((p) => p.type === 'reasoning').map((p) => (p as { text: string }).text)).toEqual(['thinking…']);
    const tools = parts.map(toolPartOf).filter((t) => t !== null);
    expect(tools.map((t) => [t.toolCallId, t.toolName, t.state])).toEqual([
      ['c1', 'Bash', 'output-available'],
      ['c2', 'Agent', 'input-available'],
    ]);
    expect(tools[0]!.output).toBe('a\nb');
    expect(run.childThreads).toEqual({ c2: 'th_1.sub-abcde-123' });
    expect(m.items.map((i) => i.kind)).toEqual(['notice', 'run']);
  });

  it('ignores replayed seqs, so a resubscribe never duplicates text', async () => {
    seq = 0;
    const m = new ThreadModel('th_1');
    const events = [
      ev('run_started', { runId: 'r' }),
      part('r', { type: 'text-start', id: 't' }),
      part('r', { type: 'text-delta', id: 't', delta: 'once' }),
    ];
    for (const e of events) m.apply(e);
    for (const e of events) m.apply(e);
    m.apply(part('r', { type: 'text-end', id: 't' }));
    m.apply(ev('run_finished', { runId: 'r', status: 'completed' }));
    await m.settled();
    expect(m.run('r')!.message.parts.map((p) => (p as { text?: string }).text)).toEqual(['once']);
    expect(m.items).toHaveLength(1);
  });

  it('lists announced tool calls waiting for an answer until approved, answered or the run ends; unannounced calls never wait', async () => {
    seq = 0;
    const m = new ThreadModel('th_1');
    const ask = (id: string, approvers: string[]) =>
      part('r', {
        type: 'tool-approval-request',
        approvalId: id,
        toolCallId: id,
        providerMetadata: { bubble: { approvers } },
      });
    m.apply(ev('run_started', { runId: 'r' }));
    m.apply(part('r', { type: 'tool-input-available', toolCallId: 'a', toolName: 'Bash', input: {}, dynamic: true }));
    m.apply(part('r', { type: 'tool-input-available', toolCallId: 'b', toolName: 'Bash', input: {}, dynamic: true }));
    m.apply(
      part('r', { type: 'tool-input-available', toolCallId: 'quiet', toolName: 'Read', input: {}, dynamic: true }),
    );
    m.apply(ask('a', ['you']));
    m.apply(ask('b', ['you', 'ann']));
    await new Promise((r) => setTimeout(r, 10));
    expect(m.waitingToolCalls()).toEqual([
      { runId: 'r', toolCallId: 'a', toolName: 'Bash', approvers: ['you'] },
      { runId: 'r', toolCallId: 'b', toolName: 'Bash', approvers: ['you', 'ann'] },
    ]);
    m.apply(ev('tool_call_approval', { toolCallId: 'a', decision: 'deny', reason: 'no' }, 'you'));
    expect(m.waitingToolCalls().map((w) => w.toolCallId)).toEqual(['b']);
    expect(m.approval('a')).toEqual({ toolCallId: 'a', decision: 'deny', reason: 'no', by: 'you', seq: 7 });
    m.apply(ev('run_interrupt_requested', { runId: 'r' }, 'you'));
    m.apply(ev('run_finished', { runId: 'r', status: 'interrupted' }));
    await m.settled();
    expect(m.waitingToolCalls()).toEqual([]);
    expect([m.run('r')!.status, m.run('r')!.interruptRequestedBy]).toEqual(['interrupted', 'you']);
  });

  it("keeps a sub-agent's request, whose call is on a subthread, with its tool and input", async () => {
    seq = 0;
    const m = new ThreadModel('th_1');
    m.apply(ev('run_started', { runId: 'approval-s1' }));
    m.apply(
      part('approval-s1', {
        type: 'tool-approval-request',
        approvalId: 's1',
        toolCallId: 's1',
        providerMetadata: {
          bubble: {
            approvers: ['you'],
            threadId: 'th_1.sub-abcde-123',
            toolName: 'Bash',
            input: { command: 'touch x' },
          },
        },
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(m.subagentRequests('approval-s1')).toEqual([
      {
        toolCallId: 's1',
        by: 'bot',
        runId: 'approval-s1',
        seq: 2,
        approvers: ['you'],
        subthreadId: 'th_1.sub-abcde-123',
        toolName: 'Bash',
        input: { command: 'touch x' },
      },
    ]);
    expect(m.waitingRequest('s1')?.approvers).toEqual(['you']);
    m.apply(ev('tool_call_approval', { toolCallId: 's1', decision: 'allow' }, 'you'));
    expect(m.waitingRequest('s1')).toBeUndefined();
    m.apply(ev('run_finished', { runId: 'approval-s1', status: 'completed' }));
    await m.settled();
    expect(m.run('approval-s1')!.message.parts).toEqual([]);
  });

  it("trusts only a bot's request, none when two principals announce one call, and only the named approvers' answers", async () => {
    seq = 0;
    const bots = new Set(['bot', 'other-bot']);
    const m = new ThreadModel('th_1', { isBot: (id) => bots.has(id) });
    const ask = (runId: string, id: string, approvers: string[], by: string) =>
      part(
        runId,
        {
          type: 'tool-approval-request',
          approvalId: id,
          toolCallId: id,
          providerMetadata: { bubble: { approvers, toolName: 'Bash', input: {} } },
        },
        by,
      );
    m.apply(ev('run_started', { runId: 'forged' }, 'mallory'));
    m.apply(ask('forged', 'x', ['you'], 'mallory'));
    m.apply(ev('run_started', { runId: 'real' }));
    m.apply(ask('real', 'y', ['you'], 'bot'));
    m.apply(ev('run_started', { runId: 'rival' }, 'other-bot'));
    m.apply(ask('rival', 'y', ['you'], 'other-bot'));
    m.apply(ask('real', 'z', ['you'], 'bot'));
    await new Promise((r) => setTimeout(r, 10));
    // A person cannot ask in a bot's name; a call two bots claim gets no buttons for anyone.
    expect(m.request('x')).toBeUndefined();
    expect(m.request('y')).toBeUndefined();
    expect(m.waitingToolCalls().map((w) => w.toolCallId)).toEqual(['z']);
    // Mallory's answer does not settle z (the bot ignores it too); the approver's does, and so would the bot's own denial.
    m.apply(ev('tool_call_approval', { toolCallId: 'z', decision: 'allow' }, 'mallory'));
    expect(m.approval('z')).toBeUndefined();
    expect(m.waitingRequest('z')?.approvers).toEqual(['you']);
    m.apply(ev('tool_call_approval', { toolCallId: 'z', decision: 'deny', reason: 'not now' }, 'you'));
    expect(m.approval('z')).toMatchObject({ by: 'you', decision: 'deny', reason: 'not now' });
    expect(m.waitingRequest('z')).toBeUndefined();
  });

  it('opens a bare-delta run without run_started and records errors', async () => {
    seq = 0;
    const m = new ThreadModel('th_1');
    m.apply(part('bare', { type: 'text-start', id: 't' }, 'you'));
    m.apply(part('bare', { type: 'text-delta', id: 't', delta: 'hi' }, 'you'));
    m.apply(
      ev('run_finished', { runId: 'bare', status: 'error', error: { code: 'engine', message: 'it broke' } }, 'you'),
    );
    await m.settled();
    const run = m.run('bare')!;
    expect([run.principalId, run.status, run.error]).toEqual(['you', 'error', { code: 'engine', message: 'it broke' }]);
    expect((run.message.parts[0] as { text: string }).text).toBe('hi');
  });
});
