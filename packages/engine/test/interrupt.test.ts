import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blocksOf, harnessFor, textOf, waitForProcess } from './harness.js';

describe.concurrent('interrupt (real CLI against the model double)', () => {
  it('interrupts while text streams; the query stays usable and the next turn runs normally', async (ctx) => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const h = await harnessFor(ctx, [
      { match: { text: 'talk slowly' }, reply: [{ type: 'text', text: words, delayMs: 150 }] },
      { match: { text: 'after the interrupt' }, reply: [{ type: 'text', text: 'Still here.' }] },
    ]);
    const s = h.start();
    s.live.push('talk slowly');
    await s.waitFor(
      (m) => m.type === 'stream_event' && (m.event as { delta?: { type?: string } }).delta?.type === 'text_delta',
      { nth: 2, what: 'two text deltas' },
    );
    const receipt = await s.live.interrupt();
    expect(receipt).toMatchObject({ still_queued: [] });
    const r1 = await s.result(1);
    expect(r1).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      terminal_reason: 'aborted_streaming',
    });
    expect(s.live.classify(r1 as never).kind).toBe('interrupted');
    const partial = s.of('assistant').find((m) => m.aborted === true);
    expect(partial).toBeDefined();
    expect(words.startsWith(textOf(partial!))).toBe(true);
    expect(textOf(partial!).length).toBeLessThan(words.length);
    expect(s.of('user').map(textOf)).toContain('[Request interrupted by user]');
    expect(h.double.requests.find((r) => r.lastUserText === 'talk slowly')?.completion).toBe('aborted');

    s.live.push('after the interrupt');
    const r2 = await s.result(2);
    expect(r2).toMatchObject({ subtype: 'success', is_error: false, result: 'Still here.' });
    expect(s.live.isEnded).toBe(false);
    await s.record('interrupt-streaming');
  });

  it('interrupts while a tool runs; the tool is stopped, the turn ends aborted_tools, the query stays usable', async (ctx) => {
    const h = await harnessFor(ctx, [
      {
        match: { text: 'run a long tool' },
        reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 9.123', description: 'sleep long' } }],
      },
      { match: { text: 'after the interrupt' }, reply: [{ type: 'text', text: 'Back again.' }] },
    ]);
    const s = h.start();
    s.live.push('run a long tool');
    const pid = await waitForProcess('sleep 9.123');
    await s.live.interrupt();
    const r1 = await s.result(1);
    expect(r1).toMatchObject({ subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_tools' });
    const toolResult = s
      .of('user')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_result');
    expect(toolResult).toMatchObject({ is_error: true });
    expect(String(toolResult!.content)).toMatch(/stopped while running/);
    expect(s.of('user').map(textOf)).toContain('[Request interrupted by user for tool use]');
    // The sleep was killed, not left running (it would otherwise run for seconds more; the CLI
    // long-sleep guard refuses sleeps much longer than this, so the margin is what we can get).
    await ctx.expect.poll(() => existsSync(`/proc/${pid}`), { timeout: 3_000 }).toBe(false);

    s.live.push('after the interrupt');
    const r2 = await s.result(2);
    expect(r2).toMatchObject({ subtype: 'success', result: 'Back again.' });
    await s.record('interrupt-tool');
  });
});
