import { describe, expect, it } from 'vitest';
import { AppendRequestSchema, appendRequestEvents, ReadEventsQuerySchema, validateEventData } from './events.js';

describe('validateEventData', () => {
  const cases: Array<[string, string, unknown, boolean]> = [
    ['text delta', 'message_part', { runId: 'r1', chunk: { type: 'text-delta', id: 't1', delta: 'hi' } }, true],
    [
      'tool input with childThreadId',
      'message_part',
      {
        runId: 'r1',
        chunk: {
          type: 'tool-input-available',
          toolCallId: 'c1',
          toolName: 'Agent',
          input: {},
          providerMetadata: { bubble: { childThreadId: 'th_a.sub-abcde-123' } },
        },
      },
      true,
    ],
    ['data chunk', 'message_part', { runId: 'r1', chunk: { type: 'data-progress', data: { pct: 3 } } }, true],
    [
      'file chunk',
      'message_part',
      { runId: 'r1', chunk: { type: 'file', url: 'https://x/y.png', mediaType: 'image/png' } },
      true,
    ],
    ['unknown chunk type', 'message_part', { runId: 'r1', chunk: { type: 'text-blob', id: 't' } }, false],
    ['delta without text', 'message_part', { runId: 'r1', chunk: { type: 'text-delta', id: 't1' } }, false],
    ['missing runId', 'message_part', { chunk: { type: 'text-start', id: 't1' } }, false],
    ['run_started', 'run_started', { runId: 'r1', replyTo: [3, 4] }, true],
    ['run_started bad replyTo', 'run_started', { runId: 'r1', replyTo: ['3'] }, false],
    ['run_finished', 'run_finished', { runId: 'r1', status: 'completed', usage: { input_tokens: 3 } }, true],
    ['run_finished bad status', 'run_finished', { runId: 'r1', status: 'done' }, false],
    [
      'run_finished error',
      'run_finished',
      { runId: 'r1', status: 'error', error: { code: 'rate_limit', message: 'slow down' } },
      true,
    ],
    ['interrupt', 'run_interrupt_requested', { runId: 'r1', reason: 'stop' }, true],
    ['approval', 'tool_call_approval', { toolCallId: 'c1', decision: 'allow', updatedInput: { a: 1 } }, true],
    ['approval bad decision', 'tool_call_approval', { toolCallId: 'c1', decision: 'maybe' }, false],
    ['tool result', 'tool_call_result', { toolCallId: 'c1', output: 'ok', isError: false }, true],
    ['custom dotted', 'acme.poll_created', { question: 'lunch?' }, true],
    ['custom not object', 'acme.poll_created', [1, 2], false],
    ['custom null', 'acme.poll_created', null, false],
    ['unknown undotted', 'poll_created', {}, false],
  ];
  it.each(cases)('%s', (_name, type, data, ok) => {
    expect(validateEventData(type, data).ok).toBe(ok);
  });

  it('names the failing field in its message', () => {
    const result = validateEventData('run_finished', { runId: 'r1', status: 'done' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain('status');
  });
});

describe('AppendRequestSchema', () => {
  it('takes one event or a batch', () => {
    const single = AppendRequestSchema.parse({ type: 'acme.x', data: {}, clientEventId: 'c1' });
    expect(appendRequestEvents(single)).toHaveLength(1);
    const batch = AppendRequestSchema.parse({
      events: [
        { type: 'acme.x', data: {} },
        { type: 'acme.y', data: {} },
      ],
    });
    expect(appendRequestEvents(batch).map((event) => event.type)).toEqual(['acme.x', 'acme.y']);
  });
  it('refuses an empty batch and one over 500 events', () => {
    expect(AppendRequestSchema.safeParse({ events: [] }).success).toBe(false);
    const big = Array.from({ length: 501 }, () => ({ type: 'acme.x', data: {} }));
    expect(AppendRequestSchema.safeParse({ events: big }).success).toBe(false);
  });
});

describe('ReadEventsQuerySchema', () => {
  it('defaults limit to 100 and caps it at 1000', () => {
    expect(ReadEventsQuerySchema.parse({}).limit).toBe(100);
    expect(ReadEventsQuerySchema.safeParse({ limit: '1001' }).success).toBe(false);
    expect(ReadEventsQuerySchema.parse({ after: '5', limit: '10' })).toEqual({ after: 5, limit: 10 });
  });
  it('refuses after and before together, and non-numbers', () => {
    expect(ReadEventsQuerySchema.safeParse({ after: '1', before: '9' }).success).toBe(false);
    expect(ReadEventsQuerySchema.safeParse({ after: 'x' }).success).toBe(false);
  });
});
