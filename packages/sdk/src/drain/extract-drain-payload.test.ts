import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import { extractDrainPayload, type DrainOptions } from './extract-drain-payload.js';

const SELF = 'bot-self';

/** Builds a buffer: each entry is [principalId, type, data]; seqs are assigned 1, 2, 3, … unless given. */
function log(...entries: Array<[string, string, Record<string, unknown>, number?]>): EventEnvelope[] {
  return entries.map(([principalId, type, data, seq], index) => ({
    id: `ev_${seq ?? index + 1}`,
    threadId: 'th_test',
    seq: seq ?? index + 1,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: '2026-11-29T10:00:00Z',
  }));
}

const started = (runId: string, replyTo?: number[]) =>
  ['run_started', replyTo ? { runId, replyTo } : { runId }] as const;
const finished = (runId: string, status = 'completed') => ['run_finished', { runId, status }] as const;
const delta = (runId: string, text: string, id = 't1') =>
  ['message_part', { runId, chunk: { type: 'text-delta', id, delta: text } }] as const;
const chunk = (runId: string, c: Record<string, unknown>) => ['message_part', { runId, chunk: c }] as const;
const by = (
  principalId: string,
  [type, data]: readonly [string, Record<string, unknown>],
): [string, string, Record<string, unknown>] => [principalId, type, data];

interface Expected {
  text: string;
  parts?: Array<{ principalId: string; runId: string; text: string; seqs: number[] }>;
  consumed: number[];
  remaining: number[];
  replyTo: number[];
  files?: Array<{ url: string; mediaType: string; principalId: string }>;
}

const cases: Array<{ name: string; buffer: EventEnvelope[]; options?: Partial<DrainOptions>; expected: Expected }> = [
  {
    name: 'empty buffer yields nothing',
    buffer: [],
    expected: { text: '', parts: [], consumed: [], remaining: [], replyTo: [] },
  },
  {
    name: 'one complete run yields its text',
    buffer: log(
      by('alice', started('r1')),
      by('alice', delta('r1', 'Hello ')),
      by('alice', delta('r1', 'world')),
      by('alice', finished('r1')),
    ),
    expected: {
      text: 'alice: Hello world',
      parts: [{ principalId: 'alice', runId: 'r1', text: 'Hello world', seqs: [1, 2, 3, 4] }],
      consumed: [1, 2, 3, 4],
      remaining: [],
      replyTo: [1],
    },
  },
  {
    name: 'an in-flight run stays buffered',
    buffer: log(by('alice', started('r1')), by('alice', delta('r1', 'Hel'))),
    expected: { text: '', parts: [], consumed: [], remaining: [1, 2], replyTo: [] },
  },
  {
    name: 'a bare-delta turn (no run_started) is final as it lands',
    buffer: log(by('alice', delta('r1', 'quick ')), by('alice', delta('r1', 'note'))),
    expected: {
      text: 'alice: quick note',
      parts: [{ principalId: 'alice', runId: 'r1', text: 'quick note', seqs: [1, 2] }],
      consumed: [1, 2],
      remaining: [],
      replyTo: [1],
    },
  },
  {
    name: 'a run whose run_started is not buffered but whose run_finished is, is final',
    buffer: log(by('alice', delta('r1', 'tail')), by('alice', finished('r1'))),
    expected: { text: 'alice: tail', consumed: [1, 2], remaining: [], replyTo: [1] },
  },
  {
    name: 'finalized runs drain, interleaved in-flight runs stay, in seq order',
    buffer: log(
      by('alice', started('a')),
      by('bob', started('b')),
      by('alice', delta('a', 'from alice')),
      by('bob', delta('b', 'bob typing')),
      by('alice', finished('a')),
    ),
    options: { displayNames: { alice: 'Alice' } },
    expected: {
      text: 'alice ("Alice"): from alice',
      parts: [{ principalId: 'alice', runId: 'a', text: 'from alice', seqs: [1, 3, 5] }],
      consumed: [1, 3, 5],
      remaining: [2, 4],
      replyTo: [1],
    },
  },
  {
    name: 'every part is quoted by its speaker’s id, ordered by each run’s first seq',
    buffer: log(
      by('bob', started('b')),
      by('alice', started('a')),
      by('alice', delta('a', 'second?')),
      by('alice', finished('a')),
      by('bob', delta('b', 'first')),
      by('bob', finished('b')),
    ),
    options: { displayNames: new Map([['alice', 'Alice']]) },
    expected: {
      text: 'bob: first\n\nalice ("Alice"): second?',
      parts: [
        { principalId: 'bob', runId: 'b', text: 'first', seqs: [1, 5, 6] },
        { principalId: 'alice', runId: 'a', text: 'second?', seqs: [2, 3, 4] },
      ],
      consumed: [1, 2, 3, 4, 5, 6],
      remaining: [],
      replyTo: [1, 2],
    },
  },
  {
    name: 'two runs by one principal are two quoted parts',
    buffer: log(
      by('alice', delta('a1', 'one')),
      by('alice', started('a2')),
      by('alice', delta('a2', 'two')),
      by('alice', finished('a2')),
    ),
    expected: { text: 'alice: one\n\nalice: two', consumed: [1, 2, 3, 4], remaining: [], replyTo: [1, 2] },
  },
  {
    name: 'a run with only tool chunks is consumed without text',
    buffer: log(
      by('carol-bot', started('c')),
      by(
        'carol-bot',
        chunk('c', { type: 'tool-input-available', toolCallId: 'tc1', toolName: 'search', input: { q: 'x' } }),
      ),
      by('carol-bot', chunk('c', { type: 'tool-output-available', toolCallId: 'tc1', output: { hits: 3 } })),
      by('carol-bot', finished('c')),
    ),
    expected: { text: '', parts: [], consumed: [1, 2, 3, 4], remaining: [], replyTo: [] },
  },
  {
    name: 'reasoning and text boundaries are not text; only text-delta is',
    buffer: log(
      by('alice', started('a')),
      by('alice', chunk('a', { type: 'reasoning-start', id: 'r' })),
      by('alice', chunk('a', { type: 'reasoning-delta', id: 'r', delta: 'secret thoughts' })),
      by('alice', chunk('a', { type: 'text-start', id: 't' })),
      by('alice', delta('a', 'visible', 't')),
      by('alice', chunk('a', { type: 'text-end', id: 't' })),
      by('alice', finished('a')),
    ),
    expected: { text: 'alice: visible', consumed: [1, 2, 3, 4, 5, 6, 7], remaining: [], replyTo: [1] },
  },
  {
    name: 'separate text blocks of one run are joined by a blank line',
    buffer: log(
      by('alice', started('a')),
      by('alice', delta('a', 'para one', 'x')),
      by('alice', delta('a', 'para two', 'y')),
      by('alice', finished('a')),
    ),
    expected: { text: 'alice: para one\n  \n  para two', consumed: [1, 2, 3, 4], remaining: [], replyTo: [1] },
  },
  {
    name: 'self events are dropped, even a complete run',
    buffer: log(
      by(SELF, started('s')),
      by(SELF, delta('s', 'I said this')),
      by(SELF, finished('s')),
      by('alice', delta('a', 'hi bot')),
    ),
    expected: { text: 'alice: hi bot', consumed: [1, 2, 3, 4], remaining: [], replyTo: [4] },
  },
  {
    name: 'interrupts, approvals, tool results, participant and artifact events are consumed, never text',
    buffer: log(
      by('alice', ['run_interrupt_requested', { runId: 'bot-run', reason: 'stop' }]),
      by('alice', ['tool_call_approval', { toolCallId: 'tc', decision: 'allow' }]),
      by('alice', ['tool_call_result', { toolCallId: 'tc2', output: 'done' }]),
      by('system', ['participant_added', { principalId: 'dave', role: 'member', by: 'alice' }]),
      by('system', ['participant_removed', { principalId: 'dave', role: 'member', by: 'alice' }]),
      by('system', ['artifact_updated', { name: 'plan.md', version: 2, mediaType: 'text/markdown', by: 'alice' }]),
      by('alice', ['acme.poll_created', { question: 'lunch?' }]),
    ),
    expected: { text: '', parts: [], consumed: [1, 2, 3, 4, 5, 6, 7], remaining: [], replyTo: [] },
  },
  {
    name: 'malformed run events are consumed and ignored',
    buffer: log(
      by('alice', ['message_part', { chunk: { type: 'text-delta', id: 't', delta: 'no run id' } }]),
      by('alice', ['run_started', {}]),
      by('alice', ['message_part', { runId: 'a', chunk: { type: 'nonsense' } }]),
    ),
    expected: { text: '', parts: [], consumed: [1, 2, 3], remaining: [], replyTo: [] },
  },
  {
    name: 'file parts of finalized runs are collected; a file-only run is a reply anchor without text',
    buffer: log(
      by('alice', started('a')),
      by('alice', chunk('a', { type: 'file', url: 'https://x.test/a.png', mediaType: 'image/png' })),
      by('alice', finished('a')),
      by('bob', started('b')),
      by('bob', chunk('b', { type: 'file', url: 'https://x.test/b.pdf', mediaType: 'application/pdf' })),
    ),
    expected: {
      text: '',
      parts: [],
      consumed: [1, 2, 3],
      remaining: [4, 5],
      replyTo: [1],
      files: [{ url: 'https://x.test/a.png', mediaType: 'image/png', principalId: 'alice' }],
    },
  },
  {
    name: 'an interrupted or errored run still drains its text',
    buffer: log(
      by('alice', started('a')),
      by('alice', delta('a', 'partial')),
      by('alice', finished('a', 'interrupted')),
    ),
    expected: { text: 'alice: partial', consumed: [1, 2, 3], remaining: [], replyTo: [1] },
  },
  {
    name: 'whitespace-only text yields no part but the run is consumed',
    buffer: log(by('alice', delta('a', '  \n '))),
    expected: { text: '', parts: [], consumed: [1], remaining: [], replyTo: [] },
  },
  {
    name: 'an unsorted buffer is read in seq order',
    buffer: [
      ...log(by('alice', finished('a'))).map((e) => ({ ...e, seq: 3, id: 'ev_3' })),
      ...log(by('alice', started('a'))).map((e) => ({ ...e, seq: 1, id: 'ev_1' })),
      ...log(by('alice', delta('a', 'ordered'))).map((e) => ({ ...e, seq: 2, id: 'ev_2' })),
    ],
    expected: { text: 'alice: ordered', consumed: [1, 2, 3], remaining: [], replyTo: [1] },
  },
  {
    name: 'the same runId from two principals stays two runs',
    buffer: log(by('alice', started('x')), by('mallory', delta('x', 'injected')), by('alice', delta('x', 'mine'))),
    expected: {
      text: 'mallory: injected',
      parts: [{ principalId: 'mallory', runId: 'x', text: 'injected', seqs: [2] }],
      consumed: [2],
      remaining: [1, 3],
      replyTo: [2],
    },
  },
];

describe('extractDrainPayload', () => {
  it.each(cases)('$name', ({ buffer, options, expected }) => {
    const payload = extractDrainPayload(buffer, { selfPrincipalId: SELF, ...options });
    expect(payload.text).toBe(expected.text);
    if (expected.parts) {
      expect(payload.parts.map(({ principalId, runId, text, seqs }) => ({ principalId, runId, text, seqs }))).toEqual(
        expected.parts,
      );
    }
    expect(payload.consumedSeqs).toEqual(expected.consumed);
    expect(payload.remaining.map((event) => event.seq)).toEqual(expected.remaining);
    expect(payload.replyTo).toEqual(expected.replyTo);
    if (expected.files) {
      expect(payload.files.map(({ url, mediaType, principalId }) => ({ url, mediaType, principalId }))).toEqual(
        expected.files,
      );
    } else {
      expect(payload.files).toEqual([]);
    }
  });

  it('consumed and remaining partition the buffer', () => {
    const buffer = log(
      by('alice', started('a')),
      by(SELF, delta('s', 'me')),
      by('bob', delta('b', 'x')),
      by('alice', delta('a', 'y')),
      by('system', ['participant_added', { principalId: 'eve', role: 'member', by: 'alice' }]),
    );
    const payload = extractDrainPayload(buffer, { selfPrincipalId: SELF });
    const all = [...payload.consumedSeqs, ...payload.remaining.map((event) => event.seq)].sort((a, b) => a - b);
    expect(all).toEqual([1, 2, 3, 4, 5]);
    expect(payload.remaining.map((event) => event.seq)).toEqual([1, 4]);
  });

  it('draining the remainder after the run finishes yields the whole run once', () => {
    const first = log(by('alice', started('a')), by('alice', delta('a', 'part one, ')));
    const one = extractDrainPayload(first, { selfPrincipalId: SELF });
    expect(one.text).toBe('');
    const later = [
      ...one.remaining,
      ...log(by('alice', delta('a', 'part two')), by('alice', finished('a'))).map((e, i) => ({
        ...e,
        seq: 3 + i,
        id: `ev_${3 + i}`,
      })),
    ];
    const two = extractDrainPayload(later, { selfPrincipalId: SELF });
    expect(two.text).toBe('alice: part one, part two');
    expect(two.consumedSeqs).toEqual([1, 2, 3, 4]);
    expect(two.remaining).toEqual([]);
  });
});
