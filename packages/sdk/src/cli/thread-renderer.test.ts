import { join } from 'node:path';
import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR, readEvents } from '../fold/__fixtures__/fixtures.js';
import { ThreadRenderer } from './thread-renderer.js';

let seq = 0;
function ev(principalId: string, type: string, data: Record<string, unknown>): EventEnvelope {
  seq += 1;
  return {
    id: `ev_${seq}`,
    threadId: 'th_1',
    seq,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: '2026-11-29T10:00:00Z',
  };
}
const part = (who: string, runId: string, chunk: Record<string, unknown>) => ev(who, 'message_part', { runId, chunk });

function render(events: EventEnvelope[]): string[] {
  const renderer = new ThreadRenderer();
  return [...events.flatMap((event) => renderer.render(event)), ...renderer.flush()];
}

describe('ThreadRenderer', () => {
  it.each<[string, () => EventEnvelope[], string[]]>([
    [
      'a complete run: text joined into one message',
      () => [
        ev('alice', 'run_started', { runId: 'r1' }),
        part('alice', 'r1', { type: 'text-start', id: 't' }),
        part('alice', 'r1', { type: 'text-delta', id: 't', delta: 'Hello, ' }),
        part('alice', 'r1', { type: 'text-delta', id: 't', delta: 'world' }),
        part('alice', 'r1', { type: 'text-end', id: 't' }),
        ev('alice', 'run_finished', { runId: 'r1', status: 'completed' }),
      ],
      ['#2 alice: Hello, world'],
    ],
    [
      'reasoning is marked, tools show input and output, approvals and interrupts get lines',
      () => [
        ev('bot', 'run_started', { runId: 'r2' }),
        part('bot', 'r2', { type: 'reasoning-start', id: 'r' }),
        part('bot', 'r2', { type: 'reasoning-delta', id: 'r', delta: 'let me look' }),
        part('bot', 'r2', { type: 'reasoning-end', id: 'r' }),
        part('bot', 'r2', {
          type: 'tool-input-available',
          toolCallId: 'tc_1',
          toolName: 'Read',
          input: { path: 'a.md' },
        }),
        ev('alice', 'tool_call_approval', { toolCallId: 'tc_1', decision: 'allow' }),
        part('bot', 'r2', { type: 'tool-output-available', toolCallId: 'tc_1', output: 'file text' }),
        part('bot', 'r2', {
          type: 'tool-input-available',
          toolCallId: 'tc_2',
          toolName: 'Bash',
          input: { command: 'rm -rf /' },
        }),
        ev('alice', 'tool_call_approval', { toolCallId: 'tc_2', decision: 'deny', reason: 'no way' }),
        part('bot', 'r2', { type: 'tool-output-error', toolCallId: 'tc_2', errorText: 'denied by alice' }),
        ev('alice', 'run_interrupt_requested', { runId: 'r2', reason: 'enough' }),
        ev('bot', 'run_finished', { runId: 'r2', status: 'interrupted' }),
      ],
      [
        '#2 bot (thinking): let me look',
        '#5 bot → tool Read [tc_1] input: {"path":"a.md"}',
        '#6 alice approved tool call tc_1',
        '#7 bot ← tool [tc_1] output: "file text"',
        '#8 bot → tool Bash [tc_2] input: {"command":"rm -rf /"}',
        '#9 alice denied tool call tc_2: no way',
        '#10 bot ← tool [tc_2] error: denied by alice',
        '#11 alice asked to stop run r2: enough',
        '#12 bot: [run r2 was interrupted]',
      ],
    ],
    [
      'a run that finishes with open text prints it, then its error',
      () => [
        ev('bot', 'run_started', { runId: 'r3' }),
        part('bot', 'r3', { type: 'text-start', id: 't' }),
        part('bot', 'r3', { type: 'text-delta', id: 't', delta: 'partial' }),
        ev('bot', 'run_finished', {
          runId: 'r3',
          status: 'error',
          error: { code: 'overloaded', message: 'try later' },
        }),
      ],
      ['#2 bot: partial', '#4 bot: [run r3 failed: overloaded: try later]'],
    ],
    [
      'bare deltas (no text-start) print as they land',
      () => [part('bob', 'bare', { type: 'text-delta', id: 'x', delta: 'quick note' })],
      ['#1 bob: quick note'],
    ],
    [
      'membership, artifacts, subthread tool calls and custom events',
      () => [
        ev('system', 'participant_added', { principalId: 'bob', role: 'member', by: 'alice' }),
        ev('system', 'participant_removed', { principalId: 'bob', role: 'member', by: 'bob' }),
        ev('system', 'participant_removed', { principalId: 'carol', role: 'member', by: 'alice' }),
        ev('system', 'artifact_updated', { name: 'plan.md', version: 2, mediaType: 'text/markdown', by: 'bot' }),
        part('bot', 'r4', {
          type: 'tool-input-available',
          toolCallId: 'tc_9',
          toolName: 'Agent',
          input: { prompt: 'dig' },
          providerMetadata: { bubble: { childThreadId: 'th_1.sub-abcde-fgh' } },
        }),
        ev('alice', 'acme.poll_created', { question: 'lunch?' }),
      ],
      [
        '#1 * bob joined as member (added by alice)',
        '#2 * bob left',
        '#3 * carol was removed by alice',
        '#4 * artifact plan.md v2 (text/markdown) written by bot',
        '#5 bot → tool Agent [tc_9] (runs in subthread th_1.sub-abcde-fgh) input: {"prompt":"dig"}',
        '#6 alice [acme.poll_created] {"question":"lunch?"}',
      ],
    ],
    [
      'multi-line text is indented, step and data chunks are silent',
      () => [
        part('bot', 'r5', { type: 'start-step' }),
        part('bot', 'r5', { type: 'text-start', id: 't' }),
        part('bot', 'r5', { type: 'text-delta', id: 't', delta: 'line one\nline two' }),
        part('bot', 'r5', { type: 'data-progress', data: { pct: 50 } }),
        part('bot', 'r5', { type: 'text-end', id: 't' }),
        part('bot', 'r5', { type: 'finish-step' }),
      ],
      ['#2 bot: line one\n    line two'],
    ],
  ])('%s', (_label, events, lines) => {
    seq = 0;
    expect(render(events())).toEqual(lines);
  });

  it('prints a replayed event once, and says which field of an unreadable one is broken', () => {
    seq = 0;
    const renderer = new ThreadRenderer();
    const asked = ev('alice', 'run_interrupt_requested', { runId: 'r1' });
    const broken = ev('bot', 'run_finished', { runId: 'r1', status: 'done' });
    expect([renderer.render(asked), renderer.render(asked), renderer.render(broken)]).toEqual([
      ['#1 alice asked to stop run r1'],
      [],
      ['#2 bot [unreadable run_finished: data.status]'],
    ]);
  });

  it('reads a recorded thread: the person, the reasoning, the reply, each once', () => {
    const events = readEvents(join(FIXTURE_DIR, 'streamed-reply-with-reasoning.jsonl'));
    expect(render(events)).toEqual([
      '#1 * you joined as owner (added by you)',
      '#2 * claude joined as member (added by you)',
      '#4 you: stream please',
      '#9 claude (thinking): The user wants a streamed answer.',
      '#13 claude: Here is **bold** text and code:\n    \n    ```js\n    const answer = 42;\n    ```\n    \n    Done streaming.',
    ]);
  });
});
