import { NewEventSchema } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { composeRun, enterSends } from './compose-run';

describe('composeRun', () => {
  it('makes one complete, valid run with stable client event ids', () => {
    const events = composeRun('run-web-1', 'hello\nworld');
    expect(events.map((e) => e.type)).toEqual([
      'run_started',
      'message_part',
      'message_part',
      'message_part',
      'run_finished',
    ]);
    expect(events.map((e) => e.clientEventId)).toEqual([
      'run-web-1:0',
      'run-web-1:1',
      'run-web-1:2',
      'run-web-1:3',
      'run-web-1:4',
    ]);
    expect((events[2]!.data as { chunk: { delta: string } }).chunk.delta).toBe('hello\nworld');
    for (const e of events) expect(NewEventSchema.safeParse(e).success).toBe(true);
  });
});

describe('enterSends', () => {
  it.each([
    [{ key: 'Enter', shiftKey: false, isComposing: false }, true],
    [{ key: 'Enter', shiftKey: true, isComposing: false }, false],
    [{ key: 'Enter', shiftKey: false, isComposing: true }, false],
    [{ key: 'a', shiftKey: false, isComposing: false }, false],
  ])('%j → %s', (key, sends) => expect(enterSends(key)).toBe(sends));
});
