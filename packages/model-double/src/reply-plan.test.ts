import { describe, expect, it } from 'vitest';
import { chunkText, DEFAULT_SIGNATURE, planReply } from './reply-plan.js';

const opts = { messageId: 'msg_1', model: 'm', inputTokens: 10, newToolUseId: () => 'toolu_gen' };

describe('chunkText', () => {
  it('splits by words and characters and joins back to the text', () => {
    expect(chunkText('one two  three', 1)).toEqual(['one ', 'two  ', 'three']);
    expect(chunkText('one two three four', 3)).toEqual(['one two three ', 'four']);
    expect(chunkText('abcdefg', undefined, 3)).toEqual(['abc', 'def', 'g']);
    expect(chunkText('', 1)).toEqual([]);
    expect(chunkText('  lead', 1)).toEqual(['  lead']);
  });
});

describe('planReply', () => {
  it('orders events as the API does and derives the stop reason', () => {
    const plan = planReply(
      [
        { type: 'thinking', thinking: 'hm ok' },
        { type: 'text', text: 'a b', delayMs: 7 },
        { type: 'tool_use', name: 'Bash', input: { command: 'echo hi' }, chunkChars: 10 },
      ],
      opts,
    );
    const shape = plan.events.map((e) => {
      const d = e.data as { type: string; delta?: { type: string } };
      return d.type === 'content_block_delta' && d.delta ? `${d.type}:${d.delta.type}` : d.type;
    });
    expect(shape).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta:thinking_delta',
      'content_block_delta:thinking_delta',
      'content_block_delta:signature_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(plan.events.every((e) => e.event === (e.data as { type: string }).type)).toBe(true);
    expect(plan.events.filter((e) => e.delayMs === 7)).toHaveLength(2);
    const json = plan.events
      .map((e) => (e.data as { delta?: { partial_json?: string } }).delta?.partial_json)
      .filter((p) => p !== undefined)
      .join('');
    expect(JSON.parse(json)).toEqual({ command: 'echo hi' });
    expect(plan.message.stop_reason).toBe('tool_use');
    expect(plan.message.content).toEqual([
      { type: 'thinking', thinking: 'hm ok', signature: DEFAULT_SIGNATURE },
      { type: 'text', text: 'a b' },
      { type: 'tool_use', id: 'toolu_gen', name: 'Bash', input: { command: 'echo hi' } },
    ]);
  });

  it('ends text-only replies with end_turn and honours overrides', () => {
    expect(planReply([{ type: 'text', text: 'x' }], opts).message.stop_reason).toBe('end_turn');
    const plan = planReply([{ type: 'text', text: 'x' }], {
      ...opts,
      stopReason: 'max_tokens',
      usage: { input_tokens: 1_000_000, output_tokens: 5 },
    });
    expect(plan.message.stop_reason).toBe('max_tokens');
    expect(plan.message.usage).toEqual({
      input_tokens: 1_000_000,
      output_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const delta = plan.events.find((e) => e.event === 'message_delta')!.data;
    expect(delta).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: { output_tokens: 5 },
    });
  });
});
