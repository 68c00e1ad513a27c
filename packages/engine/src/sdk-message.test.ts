import { describe, expect, it } from 'vitest';
import { assertNever, narrowSdkMessage, type NarrowedSdkMessage } from './sdk-message.js';

const sid = 'c0ffee00-0000-4000-8000-000000000000';

describe('narrowSdkMessage', () => {
  it('narrows the consumed shapes and keeps their extra fields', () => {
    const init = narrowSdkMessage({
      type: 'system',
      subtype: 'init',
      session_id: sid,
      model: 'claude-opus-5-5',
      cwd: '/w',
      tools: ['Bash'],
      permissionMode: 'default',
      apiKeySource: 'ANTHROPIC_API_KEY',
    });
    expect(init.kind).toBe('init');
    expect(init.kind === 'init' && init.message.apiKeySource).toBe('ANTHROPIC_API_KEY');

    const delta = narrowSdkMessage({
      type: 'stream_event',
      session_id: sid,
      parent_tool_use_id: null,
      uuid: 'u',
      event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
    });
    expect(delta.kind === 'stream_event' && delta.message.event.delta?.text).toBe('Hel');

    expect(
      narrowSdkMessage({ type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: sid }).kind,
    ).toBe('result');
    expect(
      narrowSdkMessage({
        type: 'system',
        subtype: 'task_notification',
        task_id: 't',
        status: 'completed',
        session_id: sid,
      }).kind,
    ).toBe('task_notification');
    expect(narrowSdkMessage({ type: 'command_lifecycle', command_uuid: 'u', state: 'queued' }).kind).toBe(
      'command_lifecycle',
    );
    expect(
      narrowSdkMessage({
        type: 'rate_limit_event',
        rate_limit_info: { status: 'rejected', resetsAt: 1796241877 },
        session_id: sid,
      }).kind,
    ).toBe('rate_limit');
  });

  it('names known-but-ignored variants', () => {
    expect(narrowSdkMessage({ type: 'system', subtype: 'thinking_tokens', session_id: sid })).toMatchObject({
      kind: 'ignored',
      variant: 'system/thinking_tokens',
    });
    expect(narrowSdkMessage({ type: 'tool_use_summary', session_id: sid })).toMatchObject({
      kind: 'ignored',
      variant: 'tool_use_summary',
    });
  });

  it('lets unknown types and drifted shapes through as unknown, with a reason, never throwing', () => {
    expect(narrowSdkMessage({ type: 'brand_new', x: 1 })).toMatchObject({
      kind: 'unknown',
      reason: 'unknown message type "brand_new"',
    });
    expect(narrowSdkMessage({ type: 'system', subtype: 'brand_new' })).toMatchObject({
      kind: 'unknown',
      reason: 'unknown system subtype "brand_new"',
    });
    const drifted = narrowSdkMessage({ type: 'assistant', session_id: sid, message: { content: 'not an array' } });
    expect(drifted.kind).toBe('unknown');
    expect(drifted.kind === 'unknown' && drifted.reason).toMatch(
      /^assistant did not match its shape at message\.content/,
    );
    expect(narrowSdkMessage(null)).toMatchObject({ kind: 'unknown', reason: 'not an object' });
  });

  it('supports exhaustive switches ending in a never check', () => {
    const describe = (n: NarrowedSdkMessage): string => {
      switch (n.kind) {
        case 'init':
        case 'status':
        case 'api_retry':
        case 'permission_denied':
        case 'task_started':
        case 'task_progress':
        case 'task_updated':
        case 'task_notification':
        case 'background_tasks_changed':
        case 'stream_event':
        case 'assistant':
        case 'user':
        case 'result':
        case 'command_lifecycle':
        case 'rate_limit':
          return n.kind;
        case 'ignored':
          return `ignored ${n.variant}`;
        case 'unknown':
          return 'unknown';
        default:
          return assertNever(n, 'message kind');
      }
    };
    expect(describe(narrowSdkMessage({ type: 'tool_progress' }))).toBe('ignored tool_progress');
    expect(() => assertNever({ kind: 'x' } as never, 'kind')).toThrow('unexpected kind: {"kind":"x"}');
  });
});
