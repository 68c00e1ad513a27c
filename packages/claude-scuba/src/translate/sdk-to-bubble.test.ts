import { narrowSdkMessage } from '@bubble/engine';
import { describe, expect, it } from 'vitest';
import { isScubaError } from '../errors.js';
import type { BubbleEventDraft } from './bubble-draft.js';
import { SdkToBubble, type TranslateStep } from './sdk-to-bubble.js';

const S = 'sess-1';
const now = () => new Date('2026-11-29T20:00:00Z');

function translator(scope: string | null = null): SdkToBubble {
  let n = 0;
  return new SdkToBubble({ scope, newRunId: () => `u${++n}`, now });
}

function feed(t: SdkToBubble, messages: unknown[]): TranslateStep {
  const all: TranslateStep = { events: [], signals: [] };
  for (const m of messages) {
    const step = t.push(narrowSdkMessage(m));
    all.events.push(...step.events);
    all.signals.push(...step.signals);
  }
  return all;
}

/** A compact view: `type` or chunk type, with the text of deltas. */
function shape(events: BubbleEventDraft[]): string[] {
  return events.map((e) => {
    if (e.type !== 'message_part')
      return `${e.type}(${e.data.runId}${e.type === 'run_finished' ? `,${e.data.status}` : ''})`;
    const c = e.data.chunk as { type: string; delta?: string; toolCallId?: string };
    return c.delta !== undefined
      ? `${c.type}:${c.delta}`
      : c.toolCallId !== undefined
        ? `${c.type}:${c.toolCallId}`
        : c.type;
  });
}

const textStream = (u: string | undefined, text: string) => {
  const extra = u === undefined ? {} : { user_message_uuid: u };
  const se = (event: unknown) => ({ type: 'stream_event', event, parent_tool_use_id: null, session_id: S, ...extra });
  return [
    se({ type: 'message_start', message: {} }),
    se({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    se({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    {
      type: 'assistant',
      message: { content: [{ type: 'text', text }] },
      parent_tool_use_id: null,
      session_id: S,
      ...extra,
    },
    se({ type: 'content_block_stop', index: 0 }),
  ];
};
const result = (extra: Record<string, unknown> = {}) => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  session_id: S,
  result: 'x',
  ...extra,
});

describe('SdkToBubble', () => {
  it('opens a run of its own for a turn nobody began (a background agent finishing)', () => {
    const t = translator();
    const out = feed(t, [...textStream(undefined, 'hi'), result()]);
    expect(shape(out.events)).toEqual([
      'run_started(u1)',
      'text-start',
      'text-delta:hi',
      'text-end',
      'run_finished(u1,completed)',
    ]);
    expect(out.events[0]!.data).toEqual({ runId: 'u1' });
    expect(out.signals.map((s) => s.kind)).toEqual(['run_opened', 'run_finished']);
    expect(t.isIdle).toBe(true);
  });

  it('is busy from beginRun until the result', () => {
    const t = translator();
    expect(t.isIdle).toBe(true);
    t.beginRun({ runId: 'r1', replyTo: [3], userMessageUuid: 'p1' });
    expect(t.currentRunId).toBe('r1');
    feed(t, textStream('p1', 'a'));
    expect(t.currentRunId).toBe('r1');
    feed(t, [result({ user_message_uuids: ['p1'] })]);
    expect(t.isIdle).toBe(true);
  });

  it('refuses to begin a run id that is open, and to finish one that is not', () => {
    const t = translator();
    t.beginRun({ runId: 'r1' });
    const codes: string[] = [];
    for (const fn of [() => t.beginRun({ runId: 'r1' }), () => t.finishRun('nope', { status: 'completed' })]) {
      try {
        fn();
      } catch (error) {
        if (isScubaError(error)) codes.push(error.code);
      }
    }
    expect(codes).toEqual(['run_state', 'run_state']);
  });

  it('finishRun ends the open blocks first (the CLI died mid-reply)', () => {
    const t = translator();
    t.beginRun({ runId: 'r1' });
    const streamed = feed(t, textStream(undefined, 'half').slice(0, 3));
    const closed = t.finishRun('r1', {
      status: 'error',
      error: { code: 'cli_exit', message: 'the Claude process stopped' },
    });
    expect(shape([...streamed.events, ...closed])).toEqual([
      'text-start',
      'text-delta:half',
      'text-end',
      'error',
      'run_finished(r1,error)',
    ]);
    expect((closed.at(-2)!.data as { chunk: unknown }).chunk).toEqual({
      type: 'error',
      errorText: 'the Claude process stopped',
    });
    expect(closed.at(-1)!.data).toEqual({
      runId: 'r1',
      status: 'error',
      error: { code: 'cli_exit', message: 'the Claude process stopped' },
    });
  });

  it('finishes every begun run the CLI batched into one turn', () => {
    const t = translator();
    t.beginRun({ runId: 'r1', userMessageUuid: 'p1' });
    t.beginRun({ runId: 'r2', userMessageUuid: 'p2' });
    const out = feed(t, [...textStream('p1', 'both'), result({ user_message_uuids: ['p1', 'p2'] })]);
    expect(shape(out.events)).toEqual([
      'text-start',
      'text-delta:both',
      'text-end',
      'run_finished(r1,completed)',
      'run_finished(r2,completed)',
    ]);
    expect(t.isIdle).toBe(true);
  });

  it('puts output on the run whose pushed uuid it carries', () => {
    const t = translator();
    t.beginRun({ runId: 'r1', userMessageUuid: 'p1' });
    t.beginRun({ runId: 'r2', userMessageUuid: 'p2' });
    const out = feed(t, [...textStream('p2', 'second'), result({ user_message_uuids: ['p2'] })]);
    expect(shape(out.events)).toEqual(['text-start', 'text-delta:second', 'text-end', 'run_finished(r2,completed)']);
    expect(t.currentRunId).toBe('r1');
  });

  it('shows complete blocks that were not streamed (partial messages off)', () => {
    const t = translator();
    t.beginRun({ runId: 'r1' });
    const out = feed(t, [
      {
        type: 'assistant',
        message: { content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] },
        parent_tool_use_id: null,
        session_id: S,
      },
      {
        type: 'assistant',
        message: { content: [{ type: 'text', text: 'whole' }] },
        parent_tool_use_id: null,
        session_id: S,
      },
    ]);
    expect(shape(out.events)).toEqual([
      'reasoning-start',
      'reasoning-delta:hmm',
      'reasoning-end',
      'text-start',
      'text-delta:whole',
      'text-end',
    ]);
    expect(new Set(out.events.map((e) => e.clientEventId)).size).toBe(out.events.length);
  });

  it('reports sub-agent messages instead of translating them, and their Agent tool use instead of a chunk', () => {
    const t = translator();
    t.beginRun({ runId: 'r1' });
    const out = feed(t, [
      {
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 'T', name: 'Task', input: { prompt: 'p' } }] },
        parent_tool_use_id: null,
        session_id: S,
      },
      {
        type: 'assistant',
        message: { content: [{ type: 'text', text: 'inside' }] },
        parent_tool_use_id: 'T',
        session_id: S,
      },
    ]);
    expect(out.events).toEqual([]);
    expect(
      out.signals.map((s) => (s.kind === 'routed' ? `routed:${s.parentToolUseId}:${s.message.kind}` : s.kind)),
    ).toEqual(['subagent_started', 'routed:T:assistant']);
  });

  it('translates a sub-agent scope: whole blocks, tool calls and results; prompt and foreign messages left out', () => {
    const t = translator('T');
    t.beginRun({ runId: 'child' });
    const out = feed(t, [
      {
        type: 'user',
        message: { role: 'user', content: [{ type: 'text', text: 'the prompt' }] },
        parent_tool_use_id: 'T',
        session_id: S,
      },
      {
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 'S1', name: 'Bash', input: { command: 'ls' } }] },
        parent_tool_use_id: 'T',
        session_id: S,
      },
      {
        type: 'user',
        message: {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'S1',
              content: [
                { type: 'text', text: 'a' },
                { type: 'text', text: 'b' },
              ],
              is_error: true,
            },
          ],
        },
        parent_tool_use_id: 'T',
        session_id: S,
      },
      {
        type: 'assistant',
        message: { content: [{ type: 'text', text: 'done' }] },
        parent_tool_use_id: 'T',
        session_id: S,
      },
      {
        type: 'assistant',
        message: { content: [{ type: 'text', text: 'main' }] },
        parent_tool_use_id: null,
        session_id: S,
      },
      {
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 'T2', name: 'Agent', input: {} }] },
        parent_tool_use_id: 'T',
        session_id: S,
      },
    ]);
    expect(shape(out.events)).toEqual([
      'tool-input-available:S1',
      'tool-output-error:S1',
      'text-start',
      'text-delta:done',
      'text-end',
    ]);
    expect((out.events[1]!.data as { chunk: unknown }).chunk).toEqual({
      type: 'tool-output-error',
      toolCallId: 'S1',
      errorText: 'a\nb',
    });
    expect(out.signals.map((s) => s.kind)).toEqual(['skipped', 'subagent_started']);
  });

  it('skips what it cannot read, with a reason, and ignores known noise', () => {
    const t = translator();
    const out = feed(t, [
      { type: 'brand_new_thing' },
      { type: 'assistant', message: 'not an object' },
      { type: 'system', subtype: 'thinking_tokens', estimated_tokens: 1 },
      { type: 'command_lifecycle', command_uuid: 'x', state: 'queued' },
    ]);
    expect(out.events).toEqual([]);
    expect(out.signals.map((s) => s.kind)).toEqual(['skipped', 'skipped']);
  });

  it('a result with nothing before it still closes a run, with the error said in plain words', () => {
    const t = translator();
    const out = feed(t, [
      result({
        subtype: 'error_during_execution',
        is_error: true,
        errors: ['No conversation found with session ID: abc'],
        result: undefined,
        terminal_reason: undefined,
      }),
    ]);
    expect(shape(out.events)).toEqual(['run_started(u1)', 'error', 'run_finished(u1,error)']);
    expect(out.events[2]!.data).toMatchObject({ error: { code: 'session_not_found' } });
    expect((out.events[1]!.data as { chunk: unknown }).chunk).toEqual({
      type: 'error',
      errorText: 'The saved Claude session was not found, so the conversation cannot be resumed.',
    });
  });

  it('reports per-run cost from the cumulative total, starting again after a new process', () => {
    const t = translator();
    const costs: unknown[] = [];
    for (const total of [0.5, 0.75, 0.1]) {
      t.beginRun({ runId: `r${total}` });
      const out = feed(t, [result({ total_cost_usd: total })]);
      costs.push((out.events.at(-1)!.data as { usage?: { costUsd?: number } }).usage?.costUsd);
    }
    expect(costs).toEqual([0.5, 0.25, 0.1]);
  });
});
