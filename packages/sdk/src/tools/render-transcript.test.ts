import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import { FIXTURE_DIR, readEvents } from '../fold/__fixtures__/fixtures.js';
import { renderTranscript } from './render-transcript.js';

function log(...entries: Array<[string, string, Record<string, unknown>]>): EventEnvelope[] {
  return entries.map(([principalId, type, data], index) => ({
    id: `ev_${index + 1}`,
    threadId: 'th_t',
    seq: index + 1,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: '2026-11-29T10:00:00Z',
  }));
}
const part = (runId: string, chunk: Record<string, unknown>) => ({ runId, chunk });

describe('renderTranscript', () => {
  it.each<[string, EventEnvelope[], string[]]>([
    ['an empty page', [], []],
    [
      'a run’s text deltas become one line at its first delta',
      log(
        ['alice', 'run_started', { runId: 'a' }],
        ['alice', 'message_part', part('a', { type: 'text-start', id: 't' })],
        ['alice', 'message_part', part('a', { type: 'text-delta', id: 't', delta: 'Hello ' })],
        ['alice', 'message_part', part('a', { type: 'text-delta', id: 't', delta: 'there' })],
        ['alice', 'message_part', part('a', { type: 'text-end', id: 't' })],
        ['alice', 'run_finished', { runId: 'a', status: 'completed' }],
      ),
      ['#3 alice: Hello there'],
    ],
    [
      'tool calls split text, and show their input and output',
      log(
        ['bot-x', 'message_part', part('b', { type: 'text-delta', id: 't', delta: 'Let me look.' })],
        [
          'bot-x',
          'message_part',
          part('b', { type: 'tool-input-available', toolCallId: 'tc1', toolName: 'search', input: { q: 'cats' } }),
        ],
        ['bot-x', 'message_part', part('b', { type: 'tool-output-available', toolCallId: 'tc1', output: { hits: 2 } })],
        ['bot-x', 'message_part', part('b', { type: 'text-delta', id: 't2', delta: 'Found two.' })],
      ),
      [
        '#1 bot-x: Let me look.',
        '#2 bot-x calls tool search (tc1) {"q":"cats"}',
        '#3 bot-x tool result (tc1): {"hits":2}',
        '#4 bot-x: Found two.',
      ],
    ],
    [
      'interleaved runs keep their own lines',
      log(
        ['alice', 'message_part', part('a', { type: 'text-delta', id: 't', delta: 'one ' })],
        ['bob', 'message_part', part('b', { type: 'text-delta', id: 't', delta: 'two' })],
        ['alice', 'message_part', part('a', { type: 'text-delta', id: 't', delta: 'three' })],
      ),
      ['#1 alice: one three', '#2 bob: two'],
    ],
    [
      'control, participant, artifact and custom events',
      log(
        ['system', 'participant_added', { principalId: 'bob', role: 'member', by: 'alice' }],
        ['alice', 'run_interrupt_requested', { runId: 'r9', reason: 'enough' }],
        ['alice', 'tool_call_approval', { toolCallId: 'tc1', decision: 'deny', reason: 'no' }],
        ['alice', 'tool_call_result', { toolCallId: 'tc2', output: 'done by hand' }],
        ['system', 'artifact_updated', { name: 'plan.md', version: 2, mediaType: 'text/markdown', by: 'alice' }],
        ['bot-x', 'run_finished', { runId: 'r9', status: 'interrupted' }],
        ['alice', 'acme.poll_created', { q: 'lunch?' }],
        ['system', 'participant_removed', { principalId: 'bob', role: 'member', by: 'bob' }],
      ),
      [
        '#1 bob joined as member (by alice)',
        '#2 alice asked to stop run r9 (enough)',
        '#3 alice denied tool call tc1 (no)',
        '#4 alice answered tool call tc2: "done by hand"',
        '#5 alice wrote artifact plan.md v2 (text/markdown)',
        '#6 bot-x run r9 ended interrupted',
        '#7 alice acme.poll_created {"q":"lunch?"}',
        '#8 bob left',
      ],
    ],
    [
      'reasoning is not shown; files are',
      log(
        ['bot-x', 'message_part', part('b', { type: 'reasoning-delta', id: 'r', delta: 'hmm' })],
        ['bot-x', 'message_part', part('b', { type: 'file', url: 'https://x.test/a.png', mediaType: 'image/png' })],
      ),
      ['#2 bot-x attached https://x.test/a.png (image/png)'],
    ],
  ])('%s', (_name, events, expected) => {
    expect(renderTranscript(events)).toEqual(expected);
  });

  it('clips long tool inputs', () => {
    const [line] = renderTranscript(
      log([
        'bot-x',
        'message_part',
        part('b', {
          type: 'tool-input-available',
          toolCallId: 'tc',
          toolName: 'write',
          input: { text: 'x'.repeat(5000) },
        }),
      ]),
    );
    expect(line?.length).toBeLessThan(450);
    expect(line).toMatch(/more chars\)$/);
  });

  it.each<[string, EventEnvelope[], string[]]>([
    [
      'a page that starts mid-run: the end of its text is a line, the end of its call too',
      log(
        ['bot-x', 'message_part', part('b', { type: 'text-delta', id: 't', delta: '…and so ' })],
        ['bot-x', 'message_part', part('b', { type: 'text-delta', id: 't', delta: 'on.' })],
        ['bot-x', 'message_part', part('b', { type: 'text-end', id: 't' })],
        ['bot-x', 'message_part', part('b', { type: 'tool-output-available', toolCallId: 'tc0', output: 'ok' })],
        ['bot-x', 'run_finished', { runId: 'b', status: 'completed' }],
      ),
      ['#1 bot-x: …and so on.', '#4 bot-x tool result (tc0): "ok"'],
    ],
    [
      'an error chunk splits the text around it',
      log(
        ['bot-x', 'message_part', part('b', { type: 'text-delta', id: 't', delta: 'one' })],
        ['bot-x', 'message_part', part('b', { type: 'error', errorText: 'overloaded' })],
        ['bot-x', 'message_part', part('b', { type: 'text-delta', id: 'u', delta: 'two' })],
      ),
      ['#1 bot-x: one', '#2 bot-x error: overloaded', '#3 bot-x: two'],
    ],
    [
      'a type nobody knows is shown as it is; a known one with broken data is left out',
      log(
        ['alice', 'poll_created', { q: 'x' }],
        ['alice', 'tool_call_approval', { toolCallId: 'tc1', decision: 'maybe' }],
      ),
      ['#1 alice poll_created {"q":"x"}'],
    ],
  ])('%s', (_name, events, expected) => {
    expect(renderTranscript(events)).toEqual(expected);
  });

  it('renders a recorded thread: messages, the call, who denied it and why', () => {
    const events = readEvents(join(FIXTURE_DIR, 'tool-denied-with-a-reason.jsonl'));
    const lines = renderTranscript(events).map((line) => line.replace(/run-[0-9a-f-]{36}/g, 'RUN'));
    expect(lines).toEqual([
      '#1 you joined as owner',
      '#2 claude joined as member (by you)',
      '#5 you: run the denied command',
      '#9 claude calls tool Bash (toolu_no1) {"command":"touch denied.txt && echo should-not-run","description":"Run a command"}',
      '#11 you denied tool call toolu_no1 (not on this machine)',
      '#12 claude tool call denied (toolu_no1)',
      '#14 claude: Understood, I did not run it.',
    ]);
  });
});
