import type { EventEnvelope } from '@bubble/protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { deepFreeze, ev, part, resetSeq } from './__fixtures__/fixtures.js';
import { foldEvents, foldPresence, foldThread } from './fold-thread.js';
import { noticeText } from './notice-text.js';
import { emptyThreadState, isOnline, runOf, runsOf, type ThreadState, timelineOf, toolCallOf } from './thread-state.js';

beforeEach(resetSeq);

/** Folds with every intermediate state deep-frozen: a fold that wrote into one would throw. */
function foldFrozen(events: EventEnvelope[]): ThreadState {
  let state = deepFreeze(emptyThreadState());
  for (const event of events) state = deepFreeze(foldThread(state, event));
  return state;
}

const partsOf = (state: ThreadState, runId: string) => runOf(state, runId)?.message.parts;

describe('foldThread: messages', () => {
  it('joins text and reasoning deltas into their blocks and notes which seq added each part', () => {
    const state = foldFrozen([
      ev('run_started', { runId: 'r', replyTo: [1] }),
      part('r', { type: 'reasoning-start', id: 'k' }),
      part('r', { type: 'reasoning-delta', id: 'k', delta: 'thinking…' }),
      part('r', { type: 'reasoning-end', id: 'k' }),
      part('r', { type: 'text-start', id: 't' }),
      part('r', { type: 'text-delta', id: 't', delta: 'Hello ' }),
      part('r', { type: 'text-delta', id: 't', delta: '**world**' }),
    ]);
    const run = runOf(state, 'r')!;
    expect(run.message).toEqual({
      id: 'r',
      role: 'assistant',
      parts: [
        { type: 'reasoning', id: 'k', text: 'thinking…', state: 'done' },
        { type: 'text', text: 'Hello **world**', state: 'streaming' },
      ],
    });
    expect(run.partSeqs).toEqual([
      { added: 2, text: 3 },
      { added: 5, text: 6 },
    ]);
    expect([run.started, run.replyTo, run.status, run.firstSeq]).toEqual([true, [1], 'streaming', 1]);
    expect(timelineOf(state)).toEqual([{ kind: 'run', runId: 'r', seq: 1 }]);
  });

  it('opens a bare-delta turn at its first part; a delta whose block never started stands alone', () => {
    const state = foldFrozen([
      part('bare', { type: 'text-delta', id: 'x', delta: 'quick ' }, 'bob'),
      part('bare', { type: 'text-delta', id: 'x', delta: 'note' }, 'bob'),
      part('bare', { type: 'text-end', id: 'x' }, 'bob'),
    ]);
    const run = runOf(state, 'bare')!;
    expect([run.principalId, run.started, run.status]).toEqual(['bob', false, 'streaming']);
    expect(run.message.parts).toEqual([
      { type: 'text', text: 'quick ', state: 'done' },
      { type: 'text', text: 'note', state: 'done' },
    ]);
  });

  it('closes a run with its status, error and who stopped it, and takes nothing after', () => {
    const state = foldFrozen([
      ev('run_started', { runId: 'r' }),
      part('r', { type: 'text-start', id: 't' }),
      ev('run_interrupt_requested', { runId: 'r', reason: 'enough' }, 'alice'),
      ev('run_interrupt_requested', { runId: 'r' }, 'carol'),
      ev('run_finished', {
        runId: 'r',
        status: 'interrupted',
        interruptedBy: 'alice',
        interruptReason: 'enough',
        usage: { outputTokens: 3 },
      }),
      part('r', { type: 'text-delta', id: 't', delta: 'late' }),
      ev('run_finished', { runId: 'other', status: 'error', error: { code: 'engine', message: 'it broke' } }),
    ]);
    expect(runOf(state, 'r')).toMatchObject({
      status: 'interrupted',
      finishedSeq: 5,
      interruptRequestedBy: 'alice',
      interruptedBy: 'alice',
      interruptReason: 'enough',
      usage: { outputTokens: 3 },
    });
    expect(partsOf(state, 'r')).toEqual([{ type: 'text', text: '', state: 'streaming' }]);
    // A run_finished for a run never seen opens and closes it at once.
    expect(runOf(state, 'other')).toMatchObject({ status: 'error', error: { code: 'engine', message: 'it broke' } });
  });

  it("folds no part of another principal's into a run: the run id is its first user's", () => {
    const state = foldFrozen([
      ev('run_started', { runId: 'r' }, 'bot'),
      part('r', { type: 'text-delta', id: 't', delta: 'forged' }, 'mallory'),
      ev('run_finished', { runId: 'r', status: 'completed' }, 'mallory'),
    ]);
    expect([partsOf(state, 'r'), runOf(state, 'r')?.status]).toEqual([[], 'streaming']);
  });

  it('replaces a data part by id, keeps none that is transient, and steps and files are parts', () => {
    const state = foldFrozen([
      part('r', { type: 'start-step' }),
      part('r', { type: 'data-progress', id: 'p', data: { pct: 10 } }),
      part('r', { type: 'data-progress', id: 'p', data: { pct: 90 } }),
      part('r', { type: 'data-ping', data: {}, transient: true }),
      part('r', { type: 'file', url: 'https://x.test/a.png', mediaType: 'image/png' }),
      part('r', { type: 'finish', finishReason: 'stop', messageMetadata: { model: 'm' } }),
    ]);
    expect(runOf(state, 'r')?.message).toEqual({
      id: 'r',
      role: 'assistant',
      metadata: { model: 'm' },
      parts: [
        { type: 'step-start' },
        { type: 'data-progress', id: 'p', data: { pct: 90 } },
        { type: 'file', url: 'https://x.test/a.png', mediaType: 'image/png' },
      ],
    });
    expect(runOf(state, 'r')?.finishReason).toBe('stop');
  });

  it('ignores a replay: a seq at or below the last folded one returns the very same state', () => {
    const events = [ev('run_started', { runId: 'r' }), part('r', { type: 'text-delta', id: 't', delta: 'once' })];
    const state = foldEvents(events);
    expect(foldEvents(events, state)).toBe(state);
  });

  it('skips an event it cannot read, says why, and goes on', () => {
    const state = foldFrozen([
      ev('run_finished', { runId: 'r', status: 'done' }),
      ev('poll_created', {}),
      ev('acme.poll_created', { q: 'lunch?' }),
      part('r', { type: 'text-delta', id: 't', delta: 'fine' }),
    ]);
    expect(state.skipped.map((error) => [error.seq, error.field])).toEqual([
      [1, 'data.status'],
      [2, 'type'],
    ]);
    expect([state.lastSeq, partsOf(state, 'r')?.length]).toEqual([4, 1]);
  });
});

describe('foldThread: tool calls', () => {
  it('takes a call through its states: input streaming, available, approval asked and answered, output', () => {
    const states: string[] = [];
    let state = deepFreeze(emptyThreadState());
    for (const event of [
      ev('run_started', { runId: 'r' }),
      part('r', { type: 'tool-input-start', toolCallId: 'c', toolName: 'Bash', dynamic: true }),
      part('r', { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"command":"l' }),
      part('r', {
        type: 'tool-input-available',
        toolCallId: 'c',
        toolName: 'Bash',
        input: { command: 'ls' },
        dynamic: true,
      }),
      part('r', {
        type: 'tool-approval-request',
        approvalId: 'c',
        toolCallId: 'c',
        providerMetadata: { bubble: { approvers: ['alice'] } },
      }),
      ev('tool_call_approval', { toolCallId: 'c', decision: 'allow' }, 'mallory'),
      ev('tool_call_approval', { toolCallId: 'c', decision: 'allow', reason: 'ok' }, 'alice'),
      part('r', { type: 'tool-output-available', toolCallId: 'c', output: 'a\nb', dynamic: true }),
    ]) {
      state = deepFreeze(foldThread(state, event));
      const tool = partsOf(state, 'r')?.[0];
      if (tool !== undefined && 'state' in tool && tool.state !== undefined) states.push(tool.state);
    }
    expect(states).toEqual([
      'input-streaming',
      'input-streaming',
      'input-available',
      'approval-requested',
      // Mallory is not among the approvers: her answer does not move the call.
      'approval-requested',
      'approval-responded',
      'output-available',
    ]);
    expect(partsOf(state, 'r')).toEqual([
      {
        type: 'dynamic-tool',
        toolName: 'Bash',
        toolCallId: 'c',
        state: 'output-available',
        input: { command: 'ls' },
        output: 'a\nb',
        approval: { id: 'c', approved: true, reason: 'ok' },
      },
    ]);
    expect(toolCallOf(state, 'c')).toMatchObject({
      runId: 'r',
      toolName: 'Bash',
      requests: [{ by: 'bot', runId: 'r', seq: 5, approvers: ['alice'] }],
      answers: [
        { by: 'mallory', decision: 'allow', seq: 6 },
        { by: 'alice', decision: 'allow', reason: 'ok', seq: 7 },
      ],
    });
  });

  it('keeps the input a tool streamed so far, repaired the way ai repairs it', () => {
    const state = foldFrozen([
      part('r', { type: 'tool-input-start', toolCallId: 'c', toolName: 'write' }),
      part('r', { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"path":"a.md","lines":[1,2' }),
    ]);
    expect(partsOf(state, 'r')).toEqual([
      {
        type: 'tool-write',
        toolCallId: 'c',
        state: 'input-streaming',
        input: { path: 'a.md', lines: [1, 2] },
        rawInput: '{"path":"a.md","lines":[1,2',
      },
    ]);
  });

  it("keeps a sub-agent's request, whose call has no part here, beside the run that carries it", () => {
    const state = foldFrozen([
      ev('run_started', { runId: 'approval-s1' }),
      part('approval-s1', {
        type: 'tool-approval-request',
        approvalId: 's1',
        toolCallId: 's1',
        providerMetadata: {
          bubble: { approvers: ['you'], threadId: 'th_1.sub-abcde-123', toolName: 'Bash', input: {} },
        },
      }),
      ev('tool_call_result', { toolCallId: 's1', output: 'done by hand', isError: false }, 'you'),
    ]);
    expect(partsOf(state, 'approval-s1')).toEqual([]);
    expect(toolCallOf(state, 's1')).toEqual({
      toolCallId: 's1',
      requests: [
        {
          toolCallId: 's1',
          by: 'bot',
          runId: 'approval-s1',
          seq: 2,
          approvers: ['you'],
          subthreadId: 'th_1.sub-abcde-123',
          toolName: 'Bash',
          input: {},
        },
      ],
      answers: [],
      results: [{ by: 'you', isError: false, seq: 3, output: 'done by hand' }],
    });
  });

  it('notes the subthread a tool call runs in, on the run and on the call', () => {
    const state = foldFrozen([
      part('r', {
        type: 'tool-input-available',
        toolCallId: 'a',
        toolName: 'Agent',
        input: {},
        providerMetadata: { bubble: { childThreadId: 'th_1.sub-abcde-123' } },
      }),
    ]);
    expect(runOf(state, 'r')?.childThreads).toEqual({ a: 'th_1.sub-abcde-123' });
    expect(toolCallOf(state, 'a')?.childThreadId).toBe('th_1.sub-abcde-123');
  });
});

describe('foldThread: people and artifacts', () => {
  it('keeps live grants and a notice for each change; presence as it is told', () => {
    let state = foldFrozen([
      ev('participant_added', { principalId: 'alice', role: 'owner', by: 'alice' }, 'system'),
      ev('participant_added', { principalId: 'bob', role: 'member', by: 'alice' }, 'system'),
      ev('participant_removed', { principalId: 'bob', role: 'member', by: 'bob' }, 'system'),
    ]);
    expect(state.participants).toEqual({ alice: { principalId: 'alice', role: 'owner', by: 'alice', joinedSeq: 1 } });
    expect(timelineOf(state).map((item) => (item.kind === 'notice' ? `${item.notice.type} ${item.seq}` : ''))).toEqual([
      'participant_added 1',
      'participant_added 2',
      'participant_removed 3',
    ]);
    const before = state;
    state = foldPresence(deepFreeze(state), { principalId: 'alice', online: true });
    expect([isOnline(state, 'alice'), isOnline(state, 'bob')]).toEqual([true, false]);
    expect(foldPresence(state, { principalId: 'alice', online: true })).toBe(state);
    expect(state.participants).toBe(before.participants);
  });

  it('keeps the latest version of each artifact and every version announced', () => {
    const state = foldFrozen([
      ev('artifact_updated', { name: 'plan.md', version: 1, mediaType: 'text/markdown', by: 'alice' }, 'system'),
      ev('artifact_updated', { name: 'plan.md', version: 2, mediaType: 'text/markdown', by: 'bot' }, 'system'),
      ev('artifact_updated', { name: 'constructor', version: 1, mediaType: 'text/plain', by: 'bot' }, 'system'),
    ]);
    expect(state.artifacts['plan.md']).toEqual({
      name: 'plan.md',
      version: 2,
      mediaType: 'text/markdown',
      by: 'bot',
      seq: 2,
      updatedAt: '2026-12-01T10:00:02Z',
      versions: [1, 2],
    });
    // A name that is also an Object.prototype key is an artifact like any other.
    expect(state.artifacts.constructor).toMatchObject({ name: 'constructor', versions: [1] });
  });
});

describe('foldThread: settings, fresh starts and files', () => {
  it('puts each in the timeline, naming the person who asked, and says it in one line', () => {
    const state = foldFrozen([
      ev('agent_settings', { target: 'bot-a', model: 'opus', permissionMode: 'plan' }, 'bob'),
      ev('agent_settings', { target: 'bot-a', budgetUsd: 0.5, requestedBy: 'alice' }, 'bot-a'),
      ev('context_reset', { target: 'bot-a', requestedBy: 'alice' }, 'bot-a'),
      ev('context_reset', { target: 'bot-a' }, 'carol'),
      ev(
        'file_added',
        { fileId: 'f_1', name: 'log.txt', mediaType: 'text/plain', size: 3_500, sha256: 'a'.repeat(64), by: 'bob' },
        'system',
      ),
    ]);
    const lines = timelineOf(state).map((item) => (item.kind === 'notice' ? noticeText(item.notice) : item.kind));
    expect(lines).toEqual([
      'bob asked bot-a for model opus, mode plan',
      'alice asked bot-a for budget $0.50',
      'alice started a fresh conversation with bot-a',
      'carol started a fresh conversation with bot-a',
      'bob added log.txt (3.4 KB)',
    ]);
    const first = timelineOf(state)[0];
    expect(first?.kind === 'notice' && first.notice).toEqual({
      type: 'agent_settings',
      target: 'bot-a',
      by: 'bob',
      settings: { model: 'opus', permissionMode: 'plan' },
    });
  });
});

describe('foldThread: structural sharing', () => {
  it('leaves every run, message and part an event does not touch the very same object', () => {
    const before = foldEvents([
      ev('participant_added', { principalId: 'alice', role: 'owner', by: 'alice' }, 'system'),
      ev('run_started', { runId: 'a' }, 'alice'),
      part('a', { type: 'text-start', id: 't' }, 'alice'),
      part('a', { type: 'text-delta', id: 't', delta: 'question' }, 'alice'),
      ev('run_started', { runId: 'b' }),
      part('b', { type: 'reasoning-start', id: 'k' }),
      part('b', { type: 'text-start', id: 't' }),
    ]);
    const after = foldThread(before, part('b', { type: 'text-delta', id: 't', delta: 'answer' }));
    const [a0, b0] = runsOf(before);
    const [a1, b1] = runsOf(after);
    expect(a1).toBe(a0);
    expect(b1).not.toBe(b0);
    expect(b1!.message.parts[0]).toBe(b0!.message.parts[0]);
    expect(b1!.message.parts[1]).not.toBe(b0!.message.parts[1]);
    for (const key of ['timeline', 'toolCalls', 'participants', 'artifacts', 'runIndex'] as const)
      expect(after[key]).toBe(before[key]);
  });
});
