import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { BubbleToSdkDrain } from './bubble-to-sdk.js';

let seq = 0;
const ev = (principalId: string, type: string, data: Record<string, unknown>): EventEnvelope => ({
  id: `ev_${++seq}`,
  threadId: 'th',
  seq,
  type,
  principalId,
  data,
  createdAt: '2026-11-29T20:00:00Z',
});
const part = (who: string, runId: string, delta: string) =>
  ev(who, 'message_part', { runId, chunk: { type: 'text-delta', id: 't', delta } });

describe('BubbleToSdkDrain', () => {
  it('drops the bot’s own events, reports interrupts, buffers foreign runs until they are final', () => {
    seq = 0;
    const drain = new BubbleToSdkDrain({ selfId: 'bot', displayNames: new Map([['alice', 'Alice']]) });
    expect(drain.observe(ev('bot', 'run_started', { runId: 'b1' }))).toEqual({ kind: 'own' });
    expect(drain.observe(ev('alice', 'run_interrupt_requested', { runId: 'b1', reason: 'stop' }))).toEqual({
      kind: 'interrupt',
      runId: 'b1',
      by: 'alice',
      reason: 'stop',
    });
    expect(drain.observe(ev('alice', 'tool_call_approval', { toolCallId: 'x', decision: 'allow' }))).toEqual({
      kind: 'other',
    });
    expect(drain.observe(ev('alice', 'run_started', { runId: 'a1' }))).toEqual({ kind: 'buffered' });
    drain.observe(part('alice', 'a1', 'hello'));
    expect(drain.drain()).toBeUndefined();
    expect(drain.bufferedSeqs).toEqual([4, 5]);
    drain.observe(ev('alice', 'run_finished', { runId: 'a1', status: 'completed' }));
    const payload = drain.drain()!;
    expect([payload.text, payload.replyTo, payload.consumedSeqs]).toEqual(['alice ("Alice"): hello', [4], [4, 5, 6]]);
    expect(drain.bufferedSeqs).toEqual([]);
  });

  it('a bare-delta turn (no run_started) is final as it lands; an open run stays buffered', () => {
    seq = 0;
    const drain = new BubbleToSdkDrain({ selfId: 'bot', displayNames: new Map() });
    drain.observe(ev('bob', 'run_started', { runId: 'open' }));
    drain.observe(part('bob', 'open', 'still typing'));
    drain.observe(part('carol', 'bare', 'quick note'));
    const payload = drain.drain()!;
    expect(payload.text).toBe('carol: quick note');
    expect(drain.bufferedSeqs).toEqual([1, 2]);
  });
});
