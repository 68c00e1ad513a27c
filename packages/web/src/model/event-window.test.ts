import type { EventEnvelope } from '@bubble/protocol';
import { foldEvents, runsOf, threadSnapshot } from '@bubble/sdk/client';
import { describe, expect, it } from 'vitest';
import { cutsARun, EventWindow, type ReadEvents, readBackward, readForward } from './event-window';
import { ThreadModel } from './thread-model';

function thread(): EventEnvelope[] {
  const events: EventEnvelope[] = [];
  const add = (type: string, data: Record<string, unknown>, principalId = 'bot') =>
    events.push({
      id: `ev_${events.length + 1}`,
      threadId: 'th_1',
      seq: events.length + 1,
      type,
      principalId,
      data,
      clientEventId: null,
      createdAt: '2026-11-29T10:00:00Z',
    } as EventEnvelope);
  add('participant_added', { principalId: 'you', role: 'owner', by: 'system' }, 'system');
  add('participant_added', { principalId: 'bot', role: 'member', by: 'you' }, 'system');
  for (let n = 0; n < 100; n++) {
    const who = n % 2 === 0 ? 'you' : 'bot';
    const runId = `r${n}`;
    add('run_started', { runId }, who);
    add('message_part', { runId, chunk: { type: 'text-start', id: 't' } }, who);
    for (let w = 0; w < 5; w++)
      add('message_part', { runId, chunk: { type: 'text-delta', id: 't', delta: `w${w} ` } }, who);
    add('message_part', { runId, chunk: { type: 'text-end', id: 't' } }, who);
    add('run_finished', { runId, status: 'completed' }, who);
  }
  return events;
}

/** A reader over the events, as `GET …/events` answers (`before` gives the page just below, ascending). */
function reader(events: EventEnvelope[], calls: string[] = []): ReadEvents {
  return async ({ after, before, limit }) => {
    calls.push(before !== undefined ? `before=${before}&limit=${limit}` : `after=${after}&limit=${limit}`);
    const page =
      before !== undefined
        ? events.filter((e) => e.seq < before).slice(-limit)
        : events.filter((e) => e.seq > (after ?? 0)).slice(0, limit);
    return { events: page, headSeq: events.length };
  };
}

describe('reading a thread newest first', () => {
  it('knows a page that cuts a run from one that does not', () => {
    const events = thread();
    expect(cutsARun(events)).toBe(false);
    expect(cutsARun(events.slice(5))).toBe(true); // starts inside r0
    expect(cutsARun(events.slice(2))).toBe(false); // starts at r0's run_started
  });

  it('grows a page backward until no run is cut', async () => {
    const events = thread();
    const calls: string[] = [];
    const page = await readBackward(reader(events, calls), events.length + 1, 12, 1000);
    expect(cutsARun(page)).toBe(false);
    expect(page.length).toBeGreaterThanOrEqual(12);
    expect(page[page.length - 1]!.seq).toBe(events.length);
    expect(calls[0]).toBe(`before=${events.length + 1}&limit=12`);
  });

  it('folds an older page in front to the same state as reading from seq 1', async () => {
    const events = thread();
    const model = new ThreadModel('th_1');
    const read = reader(events);
    await model.open(read, { headSeq: events.length });
    expect(model.hasOlder).toBe(true);
    expect(model.runs.every((run) => run.started)).toBe(true);
    const shown = model.runs.length;
    while (await model.loadOlder(read, 50)) {
      /* to the start */
    }
    expect(model.runs.length).toBeGreaterThan(shown);
    expect(model.hasOlder).toBe(false);
    expect(threadSnapshot(model.state)).toEqual(threadSnapshot(foldEvents(events)));
  });

  it('folds live events one by one after the window, and ignores replays', () => {
    const events = thread();
    const window = new EventWindow();
    window.reset(events.slice(0, 100));
    const before = window.state;
    window.append(events[99]!);
    expect(window.state).toBe(before);
    for (const e of events.slice(100)) window.append(e);
    expect(threadSnapshot(window.state)).toEqual(threadSnapshot(foldEvents(events)));
    // An untouched run is the same object: the view skips it.
    expect(runsOf(window.state)[0]).toBe(runsOf(before)[0]);
  });

  it("stands the server's grants in for the joins a window does not reach back to", () => {
    const events = thread();
    const window = new EventWindow();
    window.reset(events.slice(20));
    expect(window.state.participants).toEqual({});
    window.seedParticipants({ you: { principalId: 'you', role: 'owner', by: 'system', joinedSeq: 1 } });
    expect(Object.keys(window.state.participants)).toEqual(['you']);
    window.prepend(events.slice(0, 20));
    expect(Object.keys(window.state.participants).sort()).toEqual(['bot', 'you']);
  });

  it('reads forward to the head in pages', async () => {
    const events = thread();
    expect((await readForward(reader(events), 10)).map((e) => e.seq)).toEqual(events.slice(10).map((e) => e.seq));
  });
});
