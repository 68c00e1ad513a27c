import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import { DrainBuffer } from './drain-buffer.js';

function event(seq: number, principalId: string, type: string, data: Record<string, unknown>): EventEnvelope {
  return {
    id: `ev_${seq}`,
    threadId: 'th_t',
    seq,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: '2026-11-29T10:00:00Z',
  };
}
const delta = (runId: string, text: string) => ({ runId, chunk: { type: 'text-delta', id: 't', delta: text } });

describe('DrainBuffer', () => {
  it('drains finished runs, keeps in-flight ones, and reports how far it is drained', () => {
    const buffer = new DrainBuffer({ selfPrincipalId: 'bot' });
    expect(buffer.drainedThrough).toBe(0);
    buffer.observe(event(1, 'alice', 'run_started', { runId: 'a' }));
    buffer.observe(event(2, 'bob', 'message_part', delta('b', 'bare turn')));
    buffer.observe(event(3, 'alice', 'message_part', delta('a', 'still typing')));
    buffer.observe(event(4, 'bot', 'message_part', delta('mine', 'my own words')));

    const first = buffer.drain();
    expect(first.text).toBe('bob: bare turn');
    expect(buffer.pending.map((e) => e.seq)).toEqual([1, 3]);
    expect(buffer.drainedThrough).toBe(0);

    buffer.observe(event(5, 'alice', 'run_finished', { runId: 'a', status: 'completed' }));
    const second = buffer.drain();
    expect(second.text).toBe('alice: still typing');
    expect(buffer.pending).toEqual([]);
    expect(buffer.drainedThrough).toBe(5);
  });

  it('ignores repeats and drops its own events at once', () => {
    const buffer = new DrainBuffer({ selfPrincipalId: 'bot' });
    buffer.observe(event(1, 'alice', 'message_part', delta('a', 'once')));
    buffer.observe(event(1, 'alice', 'message_part', delta('a', 'once')));
    buffer.observe(event(2, 'bot', 'run_started', { runId: 'mine' }));
    expect(buffer.pending.map((e) => e.seq)).toEqual([1]);
    expect(buffer.drain().text).toBe('alice: once');
    expect(buffer.drainedThrough).toBe(2);
  });
});
