import { describe, expect, it } from 'vitest';
import { narrowSdkMessage } from '../src/index.js';
import { harnessFor, textOf, waitForProcess } from './harness.js';

describe.concurrent('turns through one live query (real CLI against the model double)', () => {
  it('streams a text reply: deltas, one assistant block, a success result, and the session id', async (ctx) => {
    const h = await harnessFor(ctx, [
      {
        match: { text: 'say hello' },
        reply: [{ type: 'text', text: 'Hello from the scripted model, streamed word by word.' }],
      },
    ]);
    const s = h.start();
    const uuid = s.live.push('say hello');
    const result = await s.result();
    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'Hello from the scripted model, streamed word by word.',
    });
    expect(result.user_message_uuids).toEqual([uuid]);
    expect(s.streamedText()).toBe('Hello from the scripted model, streamed word by word.');
    expect(
      s.of('stream_event').filter((m) => (m.event as { type: string }).type === 'content_block_delta').length,
    ).toBeGreaterThan(3);
    const assistant = s.of('assistant');
    expect(assistant).toHaveLength(1);
    expect(textOf(assistant[0]!)).toBe('Hello from the scripted model, streamed word by word.');
    const init = s.of('system', 'init')[0]!;
    expect(s.live.sessionId).toBe(init.session_id);
    expect(init.cwd).toBe(h.cwd);
    expect(s.messages.map(narrowSdkMessage).filter((n) => n.kind === 'unknown')).toEqual([]);
    expect(h.double.requests.filter((r) => r.kind === 'main')).toHaveLength(1);
    await s.record('text-streamed');
  });

  it('two pushes give two turns in one session, the second request carrying the history', async (ctx) => {
    const h = await harnessFor(ctx, [
      { match: { text: 'first question' }, reply: [{ type: 'text', text: 'First answer.' }] },
      { match: { text: 'second question' }, reply: [{ type: 'text', text: 'Second answer.' }] },
    ]);
    const s = h.start();
    const u1 = s.live.push('first question');
    const r1 = await s.result(1);
    const u2 = s.live.push('second question');
    const r2 = await s.result(2);
    expect([r1.result, r2.result]).toEqual(['First answer.', 'Second answer.']);
    expect([r1.user_message_uuids, r2.user_message_uuids]).toEqual([[u1], [u2]]);
    expect(r2.session_id).toBe(r1.session_id);
    expect(s.of('system', 'init')).toHaveLength(2);
    const main = h.double.requests.filter((r) => r.kind === 'main');
    expect(main).toHaveLength(2);
    // The history: user, assistant, user (this CLI also sends a role:'system' environment entry, skipped here).
    const history = (main[1]!.body as { messages: Array<{ role: string; content: unknown }> }).messages.filter(
      (m) => m.role !== 'system',
    );
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(history[0]!.content)).toContain('first question');
    expect(JSON.stringify(history[1]!.content)).toContain('First answer.');
    expect(JSON.stringify(history[2]!.content)).toContain('second question');
    await s.record('two-turns');
  });

  it('batches messages pushed while text streams into ONE next turn (engine-notes §2.5)', async (ctx) => {
    const h = await harnessFor(ctx, [
      {
        match: { text: 'start slowly' },
        reply: [{ type: 'text', text: 'one two three four five six seven eight', delayMs: 150 }],
      },
      { match: { text: 'typed ahead' }, reply: [{ type: 'text', text: 'Both typed-ahead messages seen.' }] },
    ]);
    const s = h.start();
    const u1 = s.live.push('start slowly');
    await s.waitFor(
      (m) => m.type === 'stream_event' && (m.event as { delta?: { type?: string } }).delta?.type === 'text_delta',
      { what: 'a first text delta' },
    );
    const u2 = s.live.push('typed ahead two');
    const u3 = s.live.push('typed ahead three');
    const r1 = await s.result(1);
    const r2 = await s.result(2);
    expect(r1.user_message_uuids).toEqual([u1]);
    expect(r1.result).toBe('one two three four five six seven eight');
    expect(r2.user_message_uuids).toEqual([u2, u3]);
    expect(r2.result).toBe('Both typed-ahead messages seen.');
    const main = h.double.requests.filter((r) => r.kind === 'main');
    expect(main).toHaveLength(2);
    expect(JSON.stringify((main[1]!.body as { messages: unknown[] }).messages.at(-1))).toContain(
      'typed ahead two\\ntyped ahead three',
    );
    expect(
      s
        .of('command_lifecycle')
        .filter((m) => m.state === 'queued')
        .map((m) => m.command_uuid),
    ).toEqual([u1, u2, u3]);
    await s.record('batched-while-streaming');
  });

  it('folds messages pushed while a tool runs into the running turn (one result for all)', async (ctx) => {
    const h = await harnessFor(ctx, [
      {
        match: { text: 'run the slow tool' },
        reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 2.317', description: 'wait a bit' } }],
      },
      { match: { toolResult: { name: 'Bash' } }, reply: [{ type: 'text', text: 'Tool finished; I saw your notes.' }] },
    ]);
    const s = h.start();
    const u1 = s.live.push('run the slow tool');
    await waitForProcess('sleep 2.317');
    const u2 = s.live.push('note one while the tool runs');
    const u3 = s.live.push('note two while the tool runs');
    const r1 = await s.result(1);
    expect(r1.result).toBe('Tool finished; I saw your notes.');
    expect(r1.user_message_uuids).toEqual([u1, u2, u3]);
    const main = h.double.requests.filter((r) => r.kind === 'main');
    expect(main).toHaveLength(2);
    const lastMessage = JSON.stringify((main[1]!.body as { messages: unknown[] }).messages.at(-1));
    expect(lastMessage).toContain('note one while the tool runs');
    expect(lastMessage).toContain('note two while the tool runs');
    // No second turn follows: the notes were consumed by the first.
    s.live.end();
    const end = await s.live.ended;
    expect(end.reason).toBe('closed');
    expect(s.of('result')).toHaveLength(1);
    await s.record('folded-while-tool-runs');
  });
});
