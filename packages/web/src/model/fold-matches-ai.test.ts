import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventEnvelope } from '@bubble/protocol';
import { foldEvents, parsePartialJson, runOf } from '@bubble/sdk/client';
import { parsePartialJson as aiParsePartialJson, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';

/**
 * The sdk's fold assembles each run's message without depending on `ai`; these tests hold it to
 * `ai`'s own `readUIMessageStream`, on every run of the recorded threads and on hand-made streams
 * of every chunk kind: where `ai` takes a chunk, both messages are equal; where `ai` refuses one
 * (and stops reading), the fold leaves the message as it was.
 */
const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../../../sdk/src/fold/__fixtures__');

async function aiMessage(
  runId: string,
  chunks: readonly UIMessageChunk[],
): Promise<{ message: UIMessage; failed: boolean }> {
  let failed = false;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(structuredClone(chunk));
      controller.close();
    },
  });
  let message: UIMessage = { id: runId, role: 'assistant', parts: [] };
  for await (const snapshot of readUIMessageStream<UIMessage>({
    message,
    stream,
    onError: () => {
      failed = true;
    },
  }))
    message = snapshot;
  return { message, failed };
}

let seq = 0;
const envelope = (runId: string, chunk: Record<string, unknown>): EventEnvelope => {
  seq += 1;
  return {
    id: `ev_${seq}`,
    threadId: 'th_1',
    seq,
    type: 'message_part',
    principalId: 'bot',
    data: { runId, chunk },
    clientEventId: null,
    createdAt: '2026-12-01T10:00:00Z',
  };
};

/** Chunks after which `ai` yields no new snapshot (it shows their effect with the next one). */
const QUIET = new Set(['start-step', 'finish-step', 'finish', 'abort', 'error']);

/**
 * Compares the fold with `ai` after every chunk of one run, up to the first chunk `ai` refuses.
 * The fold ignores such a chunk, except a delta whose block never started, which it keeps as a
 * finished block of its own (a reader may start mid-message).
 */
async function expectSameAsAi(runId: string, events: readonly EventEnvelope[]): Promise<number> {
  const chunks = events.map((event) => event.data.chunk as UIMessageChunk);
  const partsAfter = (n: number) => runOf(foldEvents(events.slice(0, n)), runId)?.message;
  for (let n = 1; n <= events.length; n++) {
    const chunk = chunks[n - 1]!;
    const ai = await aiMessage(runId, chunks.slice(0, n));
    if (ai.failed) {
      const before = partsAfter(n - 1)?.parts ?? [];
      const kept =
        chunk.type === 'text-delta'
          ? [{ type: 'text', text: chunk.delta, state: 'done' }]
          : chunk.type === 'reasoning-delta'
            ? [{ type: 'reasoning', id: chunk.id, text: chunk.delta, state: 'done' }]
            : [];
      expect(partsAfter(n)?.parts).toEqual([...before, ...kept]);
      return n - 1;
    }
    if (!QUIET.has(chunk.type)) expect(partsAfter(n)).toEqual(ai.message);
  }
  return events.length;
}

describe("the fold's messages are ai's messages", () => {
  const threads = readdirSync(fixtures).filter((name) => name.endsWith('.jsonl'));

  it('has recorded threads to compare', () => {
    expect(threads.length).toBeGreaterThanOrEqual(8);
  });

  it.each(threads)('every run of %s', async (name) => {
    const events = readFileSync(join(fixtures, name), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as EventEnvelope);
    const runs = new Map<string, EventEnvelope[]>();
    for (const event of events) {
      if (event.type !== 'message_part') continue;
      const runId = String(event.data.runId);
      runs.set(runId, [...(runs.get(runId) ?? []), event]);
    }
    for (const [runId, parts] of runs) await expectSameAsAi(runId, parts);
  });

  it.each<[string, Array<Record<string, unknown>>]>([
    [
      'a static tool whose input streams, then an output, preliminary first',
      [
        { type: 'start-step' },
        { type: 'tool-input-start', toolCallId: 'c', toolName: 'write', title: 'Write it' },
        { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"path":"a.md","text":"hel' },
        { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: 'lo"}' },
        { type: 'tool-input-available', toolCallId: 'c', toolName: 'write', input: { path: 'a.md', text: 'hello' } },
        { type: 'tool-output-available', toolCallId: 'c', output: 'part', preliminary: true },
        { type: 'tool-output-available', toolCallId: 'c', output: 'done', providerMetadata: { p: { x: 1 } } },
        { type: 'finish-step' },
      ],
    ],
    [
      'a dynamic tool with text input encoding, then an error',
      [
        { type: 'tool-input-start', toolCallId: 'd', toolName: 'shell', dynamic: true, inputEncoding: 'text' },
        { type: 'tool-input-delta', toolCallId: 'd', inputTextDelta: 'ls -' },
        { type: 'tool-input-available', toolCallId: 'd', toolName: 'shell', input: 'ls -la', dynamic: true },
        { type: 'tool-output-error', toolCallId: 'd', errorText: 'exit 2' },
      ],
    ],
    [
      'refused inputs, static and dynamic',
      [
        { type: 'tool-input-error', toolCallId: 's', toolName: 'write', input: { bad: 1 }, errorText: 'no path' },
        { type: 'tool-input-error', toolCallId: 'y', toolName: 'shell', input: 'x', errorText: 'bad', dynamic: true },
      ],
    ],
    [
      'an approval asked, then the call denied',
      [
        { type: 'tool-input-available', toolCallId: 'b', toolName: 'Bash', input: { command: 'rm' } },
        { type: 'tool-approval-request', approvalId: 'ap-b', toolCallId: 'b' },
        { type: 'tool-output-denied', toolCallId: 'b' },
      ],
    ],
    [
      'text and reasoning with provider metadata, steps, files and sources',
      [
        { type: 'start', messageId: 'm1', messageMetadata: { model: 'a', stats: { n: 1 } } },
        { type: 'reasoning-start', id: 'r', providerMetadata: { anthropic: { signature: 's' } } },
        { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
        { type: 'reasoning-end', id: 'r' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'a', providerMetadata: { p: { k: 1 } } },
        { type: 'text-delta', id: 't', delta: 'b' },
        { type: 'text-end', id: 't' },
        { type: 'start-step' },
        { type: 'file', url: 'https://x.test/a.png', mediaType: 'image/png' },
        { type: 'source-url', sourceId: 's1', url: 'https://x.test', title: 'X' },
        { type: 'source-document', sourceId: 's2', mediaType: 'text/plain', title: 'Doc', filename: 'd.txt' },
        { type: 'message-metadata', messageMetadata: { stats: { m: 2 } } },
        { type: 'finish', finishReason: 'stop', messageMetadata: { done: true } },
      ],
    ],
    [
      'data parts: replaced by id, transient ones not kept',
      [
        { type: 'data-progress', id: 'p', data: { pct: 1 } },
        { type: 'data-note', data: 'plain' },
        { type: 'data-progress', id: 'p', data: { pct: 2 } },
        { type: 'data-ping', data: {}, transient: true },
      ],
    ],
    [
      'a text part kept open across a tool call, and a new message id starting over',
      [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'before ' },
        { type: 'tool-input-available', toolCallId: 'q', toolName: 'Read', input: {} },
        { type: 'text-delta', id: 't', delta: 'after' },
        { type: 'text-end', id: 't' },
        { type: 'start', messageId: 'other' },
        { type: 'text-start', id: 'u' },
        { type: 'text-delta', id: 'u', delta: 'fresh' },
      ],
    ],
    ['a delta whose block never started', [{ type: 'text-delta', id: 'nope', delta: 'x' }]],
    ['an output for a call never seen', [{ type: 'tool-output-available', toolCallId: 'ghost', output: 1 }]],
  ])('%s', async (_name, chunks) => {
    seq = 0;
    const events = chunks.map((chunk) => envelope('r', chunk));
    const compared = await expectSameAsAi('r', events);
    // Every chunk compared, but in the two streams `ai` refuses at their first chunk.
    expect(compared).toBe(events.length === 1 ? 0 : events.length);
  });
});

describe('parsePartialJson repairs as ai repairs', () => {
  it.each([
    '{"a":1}',
    '',
    '{"comm',
    '{"command":"ls -',
    '{"a":[1,2,',
    '{"a":tr',
    '{"a":-',
    '{"a":12.',
    '{"a":"x\\',
    '{"a":"\\u00e',
    '[{"a":1},{"b"',
    '{"k": "v", "n": 1.5e',
    ' { "a" : 1 , ',
    'nul',
  ])('%j', async (text) => {
    expect(parsePartialJson(text)).toEqual((await aiParsePartialJson(text)).value);
  });
});
