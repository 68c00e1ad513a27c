import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import type { ReadEvents } from './event-window';
import { ThreadFeed } from './thread-feed';

function envelope(seq: number, type: string, data: Record<string, unknown>, principalId: string): EventEnvelope {
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

function message(events: EventEnvelope[], runId: string, who: string, text: string): void {
  const add = (type: string, data: Record<string, unknown>) =>
    events.push(envelope(events.length + 1, type, data, who));
  add('run_started', { runId });
  add('message_part', { runId, chunk: { type: 'text-start', id: 't' } });
  add('message_part', { runId, chunk: { type: 'text-delta', id: 't', delta: text } });
  add('message_part', { runId, chunk: { type: 'text-end', id: 't' } });
  add('run_finished', { runId, status: 'completed' });
}

function reader(events: EventEnvelope[], calls: string[]): ReadEvents {
  return async ({ after, before, limit }) => {
    calls.push(before !== undefined ? `before=${before}` : `after=${after}`);
    const page =
      before !== undefined
        ? events.filter((e) => e.seq < before).slice(-limit)
        : events.filter((e) => e.seq > (after ?? 0)).slice(0, limit);
    return { events: page, headSeq: events.length };
  };
}

describe('ThreadFeed', () => {
  it('reads the newest events once, then only what is new, and counts messages for the list', async () => {
    const events: EventEnvelope[] = [];
    for (let n = 0; n < 60; n++) message(events, `r${n}`, n % 2 === 0 ? 'you' : 'bot', `text ${n}`);
    const calls: string[] = [];
    const feed = new ThreadFeed('you');
    const cursor = events.length;
    await feed.refresh(reader(events, calls), events.length, cursor);
    expect(feed.signals(cursor, () => true)).toEqual({ unread: 0, unreadAtLeast: false, approvalsForMe: 0 });
    message(events, 'late-1', 'bot', 'one more');
    message(events, 'late-2', 'bot', 'and another');
    calls.length = 0;
    await feed.refresh(reader(events, calls), events.length, cursor);
    expect(calls).toEqual([`after=${cursor}`]);
    expect(feed.signals(cursor, () => true)).toEqual({ unread: 2, unreadAtLeast: false, approvalsForMe: 0 });
  });

  it('says "at least" when the cursor is further back than it reads', async () => {
    const events: EventEnvelope[] = [];
    for (let n = 0; n < 600; n++) message(events, `r${n}`, 'bot', `text ${n}`);
    const feed = new ThreadFeed('you');
    await feed.refresh(reader(events, []), events.length, 0);
    const signals = feed.signals(0, () => true);
    expect(signals.unreadAtLeast).toBe(true);
    expect(signals.unread).toBeGreaterThanOrEqual(400);
  });
});
