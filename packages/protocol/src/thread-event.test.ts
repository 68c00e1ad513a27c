import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from './events.js';
import { isCustomEvent, parseEvent, type ThreadEvent } from './thread-event.js';

const envelope = (type: string, data: Record<string, unknown>, seq = 7): EventEnvelope => ({
  id: `ev_${seq}`,
  threadId: 'th_1',
  seq,
  type,
  principalId: 'bot',
  data,
  clientEventId: null,
  createdAt: '2026-12-01T10:00:00Z',
});

describe('parseEvent', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['a text delta', 'message_part', { runId: 'r1', chunk: { type: 'text-delta', id: 't', delta: 'hi' } }],
    ['a data chunk', 'message_part', { runId: 'r1', chunk: { type: 'data-progress', data: { pct: 3 } } }],
    ['run_started with replyTo', 'run_started', { runId: 'r1', replyTo: [3] }],
    [
      'run_finished with the fields protocol.md lists',
      'run_finished',
      {
        runId: 'r1',
        status: 'interrupted',
        interruptedBy: 'alice',
        interruptReason: 'enough',
        usage: { inputTokens: 3, totalCostUsd: 0.1 },
      },
    ],
    ['an interrupt request', 'run_interrupt_requested', { runId: 'r1' }],
    ['an approval', 'tool_call_approval', { toolCallId: 'c1', decision: 'deny', reason: 'no' }],
    ['a supplied result', 'tool_call_result', { toolCallId: 'c1', output: { ok: true }, isError: false }],
    ['a participant added', 'participant_added', { principalId: 'bob', role: 'member', by: 'alice' }],
    ['a participant removed', 'participant_removed', { principalId: 'bob', role: 'member', by: 'bob' }],
    ['an artifact write', 'artifact_updated', { name: 'plan.md', version: 2, mediaType: 'text/markdown', by: 'bot' }],
    ['run_started with its settings', 'run_started', { runId: 'r1', settings: { model: 'opus', budgetUsd: 0.5 } }],
    [
      'a settings request',
      'agent_settings',
      { target: 'bot-a', model: 'claude-sonnet-4-5', permissionMode: 'plan', effort: 'high', budgetUsd: 2 },
    ],
    ['a chat command the bot recorded', 'agent_settings', { target: 'bot-a', model: 'opus', requestedBy: 'alice' }],
    ['a fresh start', 'context_reset', { target: 'bot-a' }],
    [
      'an uploaded file',
      'file_added',
      { fileId: 'f_1', name: 'shot.png', mediaType: 'image/png', size: 3, sha256: 'a'.repeat(64), by: 'alice' },
    ],
  ])('reads %s as its typed event', (_name, type, data) => {
    const result = parseEvent(envelope(type, data));
    expect(result).toEqual({ ok: true, event: envelope(type, data) });
    if (result.ok) expect(isCustomEvent(result.event)).toBe(false);
  });

  it('reads a dotted type as a custom event, its data untouched', () => {
    const result = parseEvent(envelope('acme.poll_created', { question: 'lunch?' }));
    expect(result.ok && isCustomEvent(result.event)).toBe(true);
    expect(result.ok && result.event.data).toEqual({ question: 'lunch?' });
  });

  it.each<[string, string, Record<string, unknown>, string, 'invalid_data' | 'unknown_type']>([
    ['a missing runId', 'message_part', { chunk: { type: 'text-start', id: 't' } }, 'data.runId', 'invalid_data'],
    [
      'a delta without its text',
      'message_part',
      { runId: 'r1', chunk: { type: 'text-delta', id: 't' } },
      'data.chunk.delta',
      'invalid_data',
    ],
    [
      'a chunk type nobody knows',
      'message_part',
      { runId: 'r1', chunk: { type: 'text-blob', id: 't' } },
      'data.chunk.type',
      'invalid_data',
    ],
    ['a status outside the enum', 'run_finished', { runId: 'r1', status: 'done' }, 'data.status', 'invalid_data'],
    [
      'an interruptedBy that is no principal id',
      'run_finished',
      { runId: 'r1', status: 'interrupted', interruptedBy: 3 },
      'data.interruptedBy',
      'invalid_data',
    ],
    ['replyTo of strings', 'run_started', { runId: 'r1', replyTo: ['3'] }, 'data.replyTo.0', 'invalid_data'],
    [
      'a decision of maybe',
      'tool_call_approval',
      { toolCallId: 'c1', decision: 'maybe' },
      'data.decision',
      'invalid_data',
    ],
    ['a role of admin', 'participant_added', { principalId: 'b', role: 'admin', by: 'a' }, 'data.role', 'invalid_data'],
    [
      'version zero',
      'artifact_updated',
      { name: 'a', version: 0, mediaType: 'x', by: 'b' },
      'data.version',
      'invalid_data',
    ],
    [
      'a mode that skips approvals',
      'agent_settings',
      { target: 'bot-a', permissionMode: 'bypassPermissions' },
      'data.permissionMode',
      'invalid_data',
    ],
    ['a negative budget', 'agent_settings', { target: 'bot-a', budgetUsd: -1 }, 'data.budgetUsd', 'invalid_data'],
    ['a target that is no id', 'context_reset', { target: 'Bot A' }, 'data.target', 'invalid_data'],
    [
      'a sha256 of the wrong length',
      'file_added',
      { fileId: 'f', name: 'a', mediaType: 'text/plain', size: 1, sha256: 'ab', by: 'a' },
      'data.sha256',
      'invalid_data',
    ],
    ['an undotted unknown type', 'poll_created', {}, 'type', 'unknown_type'],
  ])('refuses %s, naming the field', (_name, type, data, field, code) => {
    const result = parseEvent(envelope(type, data));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect([result.error.code, result.error.field, result.error.type, result.error.seq]).toEqual([
      code,
      field,
      type,
      7,
    ]);
    expect(result.error.message).toContain(`#7 (${type})`);
    expect(result.error.message).toContain(field);
  });

  it('narrows data by type, with custom events left over after the known cases', () => {
    const describe = (event: ThreadEvent): string => {
      switch (event.type) {
        case 'message_part':
          return `${event.data.runId}:${event.data.chunk.type}`;
        case 'run_finished':
          return `${event.data.runId}:${event.data.status}:${event.data.interruptedBy ?? '-'}`;
        case 'run_started':
        case 'run_interrupt_requested':
        case 'tool_call_approval':
        case 'tool_call_result':
        case 'participant_added':
        case 'participant_removed':
        case 'artifact_updated':
        case 'agent_settings':
        case 'context_reset':
        case 'file_added':
          return event.type;
        default:
          return `custom ${event.type} with ${Object.keys(event.data).length} keys`;
      }
    };
    const read = (type: string, data: Record<string, unknown>) => {
      const result = parseEvent(envelope(type, data));
      return result.ok ? describe(result.event) : result.error.message;
    };
    expect(read('message_part', { runId: 'r', chunk: { type: 'text-end', id: 't' } })).toBe('r:text-end');
    expect(read('run_finished', { runId: 'r', status: 'interrupted', interruptedBy: 'al' })).toBe('r:interrupted:al');
    expect(read('acme.vote', { a: 1, b: 2 })).toBe('custom acme.vote with 2 keys');
  });
});
