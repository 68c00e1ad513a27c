import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Options } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import { RunQueue, SpareEngine, startLiveQuery, type LiveQuery, type SpareServed } from '../src/index.js';
import { Session, harnessFor } from './harness.js';

/** Spare CLIs against the real CLI: prewarm(), a claim, its settings in force, and a refused claim's fallback. */
describe('SpareEngine (real CLI against the model double)', () => {
  it('a claimed spare answers in the claimed folder with the settings applied after the claim; a refused one falls back, answered once', async (ctx) => {
    const h = await harnessFor(ctx, [
      {
        match: { text: 'read the secret' },
        reply: [{ type: 'tool_use', name: 'Read', input: { file_path: 'secret.txt' } }],
      },
      { match: { toolResult: true }, reply: [{ type: 'text', text: 'Read done.' }], times: 'always' },
      { match: { text: 'hello' }, reply: [{ type: 'text', text: 'Hello there.' }], times: 'always' },
    ]);
    await writeFile(join(h.cwd, 'secret.txt'), 'SPARE-SECRET');
    const runQueue = new RunQueue({ size: 2 });
    const { cwd: _cwd, ...host } = h.options({ tools: ['Read'] });
    const engine = new SpareEngine<string>({
      count: 1,
      runQueue,
      refillDelayMs: 60_000,
      prepare: () => ({
        options: { ...host, systemPrompt: { type: 'preset', preset: 'claude_code' } } as Options,
        bind: () => undefined,
        dispose: () => undefined,
      }),
    });
    ctx.onTestFinished(() => engine.stop());
    const parked = async () => {
      engine.start();
      while (engine.snapshot().parked.length === 0) await new Promise((r) => setTimeout(r, 20));
    };
    const open = (id: string, cwd: string, fallback: () => LiveQuery): Promise<SpareServed> =>
      engine.open({
        id,
        binding: id,
        plan: () => ({
          claim: { cwd, appendSystemPrompt: 'SPARE-CONTEXT' },
          settings: { permissions: { deny: [`Read(/${join(h.cwd, 'secret.txt')})`] } },
        }),
        fallback,
      })!;

    await parked();
    const served = await open('run-1', h.cwd, () => {
      throw new Error('no fallback expected');
    });
    expect(served.claimed).toBe(true);
    const session = new Session(served.query, h.root);
    ctx.onTestFinished(() => served.query.close());
    served.query.push('read the secret');
    await session.result();
    const init = session.of('system', 'init')[0]!;
    expect(init.cwd).toBe(h.cwd);
    // The deny rule sent after the claim is in force.
    const toolResult = JSON.stringify(session.of('user'));
    expect(toolResult).toContain('denied by your permission settings');
    expect(toolResult).not.toContain('SPARE-SECRET');
    const request = h.double.requests.find((r) => r.kind === 'main')!;
    expect(JSON.stringify((request.body as { system?: unknown }).system)).toContain('SPARE-CONTEXT');

    // A claim the CLI refuses (its folder does not exist): nothing reached it, and the fallback answers once.
    await engine.stop();
    const second = new SpareEngine<string>({
      count: 1,
      runQueue,
      prepare: () => ({ options: host as Options, bind: () => undefined, dispose: () => undefined }),
    });
    ctx.onTestFinished(() => second.stop());
    second.start();
    while (second.snapshot().parked.length === 0) await new Promise((r) => setTimeout(r, 20));
    let fallback: Session | undefined;
    const refused = await second.open({
      id: 'run-2',
      binding: 'run-2',
      plan: () => ({ claim: { cwd: join(h.root, 'no-such-folder') } }),
      fallback: () => {
        const live = startLiveQuery({ options: h.options() });
        fallback = new Session(live, h.root);
        return live;
      },
    })!;
    ctx.onTestFinished(() => refused.query.close());
    expect(refused.claimed).toBe(false);
    refused.query.push('hello');
    await fallback!.result();
    expect(fallback!.streamedText()).toBe('Hello there.');
    await new Promise((r) => setTimeout(r, 500));
    expect(h.double.requests.filter((r) => r.kind === 'main' && r.lastUserText.includes('hello'))).toHaveLength(1);
  }, 60_000);
});
