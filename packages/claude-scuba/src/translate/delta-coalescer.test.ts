import { describe, expect, it } from 'vitest';
import { FakeClock } from '../testing/fake-clock.js';
import type { BubbleEventDraft } from './bubble-draft.js';
import { DeltaCoalescer } from './delta-coalescer.js';

let counter = 0;
const part = (chunk: Record<string, unknown>): BubbleEventDraft =>
  ({ type: 'message_part', data: { runId: 'r', chunk }, clientEventId: `r:${counter++}` }) as BubbleEventDraft;
const start = (id = 't0') => part({ type: 'text-start', id });
const delta = (text: string, id = 't0', type = 'text-delta') => part({ type, id, delta: text });
const end = (id = 't0') => part({ type: 'text-end', id });
const finished = (): BubbleEventDraft => ({
  type: 'run_finished',
  data: { runId: 'r', status: 'completed' },
  clientEventId: `r:${counter++}`,
});

/** Each batch as a list of `type` or `type:text`. */
function setup() {
  const clock = new FakeClock(1_000);
  const batches: string[][] = [];
  const raw: BubbleEventDraft[][] = [];
  const coalescer = new DeltaCoalescer({
    clock,
    emit: (batch) => {
      raw.push(batch);
      batches.push(
        batch.map((e) => {
          if (e.type !== 'message_part') return e.type;
          const c = e.data.chunk as { type: string; delta?: string };
          return c.delta === undefined ? c.type : `${c.type}:${c.delta}`;
        }),
      );
    },
  });
  return { clock, batches, raw, coalescer };
}

describe('DeltaCoalescer', () => {
  it('sends the first delta of a block at once, with the block start held for it', () => {
    const { coalescer, batches } = setup();
    coalescer.push([start()]);
    expect(batches).toEqual([]);
    coalescer.push([delta('Hel')]);
    expect(batches).toEqual([['text-start', 'text-delta:Hel']]);
  });

  it('a block start with nothing after it still goes out when the interval is up', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start()]);
    clock.advance(49);
    expect(batches).toEqual([]);
    clock.advance(1);
    expect(batches).toEqual([['text-start']]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a tool chunk after a held start keeps the order', () => {
    const { coalescer, batches } = setup();
    coalescer.push([start(), part({ type: 'tool-input-available', toolCallId: 'c', toolName: 'x', input: {} })]);
    expect(batches).toEqual([['text-start', 'tool-input-available']]);
  });

  it('slows to one append every 100 ms once a block has sent 4 KiB', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start(), delta('x'.repeat(4096))]);
    clock.advance(60);
    coalescer.push([delta('a')]);
    expect(batches).toHaveLength(1);
    clock.advance(39);
    expect(batches).toHaveLength(1);
    clock.advance(1);
    expect(batches[1]).toEqual(['text-delta:a']);
  });

  it('holds later deltas and sends them merged when 50 ms have passed', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start(), delta('a')]);
    clock.advance(10);
    coalescer.push([delta('b')]);
    clock.advance(10);
    coalescer.push([delta('c')]);
    expect(batches).toEqual([['text-start', 'text-delta:a']]);
    clock.advance(29);
    expect(batches).toHaveLength(1);
    clock.advance(1);
    expect(batches).toEqual([['text-start', 'text-delta:a'], ['text-delta:bc']]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('sends a delta at once when the last one went out 50 ms or more ago', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start(), delta('a')]);
    clock.advance(60);
    coalescer.push([delta('b')]);
    expect(batches).toEqual([['text-start', 'text-delta:a'], ['text-delta:b']]);
  });

  it('sends at once when 2 KiB (UTF-8 bytes) have piled up', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start(), delta('x')]);
    clock.advance(1);
    coalescer.push([delta('é'.repeat(1023))]); // 2,046 bytes
    expect(batches).toHaveLength(1);
    coalescer.push([delta('yz')]); // 2,048 bytes
    expect(batches).toEqual([['text-start', 'text-delta:x'], [`text-delta:${'é'.repeat(1023)}yz`]]);
  });

  it('flushes held text before a block end, in the same batch, and stops its timer', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start(), delta('a')]);
    clock.advance(5);
    coalescer.push([delta('b')]);
    coalescer.push([delta('c'), end(), finished()]);
    expect(batches).toEqual([
      ['text-start', 'text-delta:a'],
      ['text-delta:bc', 'text-end', 'run_finished'],
    ]);
    expect(clock.pendingTimers).toBe(0);
    expect(coalescer.holding).toBe(false);
  });

  it('sends the first delta of the next block at once, even inside the interval', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start('t0'), delta('a', 't0'), end('t0')]);
    clock.advance(1);
    coalescer.push([part({ type: 'reasoning-start', id: 'r1' }), delta('think', 'r1', 'reasoning-delta')]);
    expect(batches[1]).toEqual(['reasoning-start', 'reasoning-delta:think']);
  });

  it('never merges deltas of different blocks', () => {
    const { coalescer, batches, clock } = setup();
    coalescer.push([start('t0'), delta('a', 't0')]);
    clock.advance(1);
    coalescer.push([delta('b', 't0')]);
    coalescer.push([delta('x', 't1')]);
    expect(batches).toEqual([
      ['text-start', 'text-delta:a'],
      ['text-delta:b', 'text-delta:x'],
    ]);
  });

  it('keeps the first clientEventId of a merged delta and does not change the drafts it was given', () => {
    const { coalescer, raw, clock } = setup();
    const first = delta('b');
    coalescer.push([start(), delta('a')]);
    clock.advance(1);
    coalescer.push([first, delta('c')]);
    coalescer.flush();
    expect(raw[1]![0]!.clientEventId).toBe(first.clientEventId);
    expect((first.data as { chunk: { delta: string } }).chunk.delta).toBe('b');
  });

  it.each([
    ['all at once (a fast double)', 0, 12],
    ['one word a millisecond (2 s)', 1, 30],
  ])('turns a 2,000-word reply streamed %s into few appends, losing nothing', (_name, msPerWord, maxBatches) => {
    const { coalescer, raw, clock } = setup();
    const words = Array.from({ length: 2_000 }, (_, i) => `word${i} `);
    coalescer.push([start()]);
    for (const word of words) {
      coalescer.push([delta(word)]);
      clock.advance(msPerWord);
    }
    coalescer.push([end(), finished()]);
    const text = raw
      .flat()
      .map((e) => (e.type === 'message_part' ? ((e.data.chunk as { delta?: string }).delta ?? '') : ''))
      .join('');
    expect(text).toBe(words.join(''));
    expect(raw.length).toBeLessThanOrEqual(maxBatches);
    expect(raw.flat().at(-1)!.type).toBe('run_finished');
  });
});
