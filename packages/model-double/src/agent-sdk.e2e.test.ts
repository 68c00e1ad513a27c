/**
 * End to end: the real Agent SDK and its bundled Claude Code CLI, offline,
 * against the double. Each query is a cold CLI start (about 1 s).
 */
import { query, type SDKMessage, type Options } from '@anthropic-ai/claude-agent-sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startModelDouble, type ModelDouble } from './model-double.js';

let double: ModelDouble;
let home: string;
beforeAll(async () => {
  double = await startModelDouble();
});
afterAll(async () => {
  await double.close();
});
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

function options(extra: Partial<Options> = {}, env: Record<string, string> = {}): Options {
  home = mkdtempSync(join(tmpdir(), 'model-double-e2e-'));
  return {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      ANTHROPIC_BASE_URL: double.url,
      ANTHROPIC_API_KEY: 'dummy',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ...env,
    },
    cwd: home,
    settingSources: [],
    includePartialMessages: true,
    tools: [],
    ...extra,
  };
}

async function collect(prompt: string, opts: Options): Promise<{ messages: SDKMessage[]; thrown: unknown }> {
  const messages: SDKMessage[] = [];
  let thrown: unknown = null;
  try {
    for await (const m of query({ prompt, options: opts })) messages.push(m);
  } catch (err) {
    thrown = err;
  }
  return { messages, thrown };
}

function textDeltas(messages: SDKMessage[]): string[] {
  return messages.flatMap((m) =>
    m.type === 'stream_event' && m.event.type === 'content_block_delta' && m.event.delta.type === 'text_delta'
      ? [m.event.delta.text]
      : [],
  );
}

function lastResult(messages: SDKMessage[]): Extract<SDKMessage, { type: 'result' }> {
  const results = messages.filter((m): m is Extract<SDKMessage, { type: 'result' }> => m.type === 'result');
  expect(results.length).toBeGreaterThan(0);
  return results[results.length - 1]!;
}

describe('the real Agent SDK against the double', () => {
  it('streams the scripted text and ends with a success result', async () => {
    double.setScript([
      {
        match: { text: 'hi', subagent: false },
        reply: [
          { type: 'thinking', thinking: 'A greeting; answer kindly.' },
          { type: 'text', text: 'Hello from the model double!' },
        ],
      },
    ]);
    const before = double.requests.length;
    const { messages, thrown } = await collect('hi', options());
    expect(thrown).toBeNull();
    expect(textDeltas(messages)).toEqual(['Hello ', 'from ', 'the ', 'model ', 'double!']);
    const thinking = messages.flatMap((m) =>
      m.type === 'stream_event' && m.event.type === 'content_block_delta' && m.event.delta.type === 'thinking_delta'
        ? [m.event.delta.thinking]
        : [],
    );
    expect(thinking.join('')).toBe('A greeting; answer kindly.');
    const result = lastResult(messages);
    expect(result.subtype).toBe('success');
    expect(result.is_error).toBe(false);
    expect(result.subtype === 'success' ? result.result : null).toBe('Hello from the model double!');
    const mine = double.requests.slice(before);
    expect(mine.map((r) => [r.kind, r.lastUserText, r.rule?.index ?? null, r.completion])).toEqual([
      ['main', 'hi', 0, 'completed'],
    ]);
    expect(mine[0]!.headers['x-claude-code-session-id']).toBe(result.session_id);
  });

  it('runs a scripted tool call and matches the tool result by tool name', async () => {
    double.setScript([
      { match: { text: 'list' }, reply: [{ type: 'text', text: 'Looking.' }, { type: 'tool_use', name: 'Bash', input: { command: 'echo made-by-bash', description: 'Echo' } }] },
      { match: { toolResult: { name: 'Bash', isError: false } }, reply: [{ type: 'text', text: 'The command ran.' }] },
    ]);
    const before = double.requests.length;
    const { messages, thrown } = await collect('list things', options({ tools: ['Bash'] }));
    expect(thrown).toBeNull();
    const toolResult = messages.find((m) => m.type === 'user' && m.parent_tool_use_id === null);
    expect(JSON.stringify(toolResult)).toContain('made-by-bash');
    const result = lastResult(messages);
    expect(result.subtype === 'success' ? result.result : null).toBe('The command ran.');
    const mine = double.requests.slice(before);
    expect(mine.map((r) => r.rule?.index ?? null)).toEqual([0, 1]);
    expect(mine[1]!.toolResults).toEqual([expect.objectContaining({ toolName: 'Bash', isError: false })]);
  });

  it('surfaces a 429 as an error result once retries run out', async () => {
    double.setScript([{ times: 'always', error: { status: 429, retryAfterSeconds: 0, message: 'rate limited by the double' } }]);
    const before = double.requests.length;
    const { messages } = await collect('hi', options({}, { CLAUDE_CODE_MAX_RETRIES: '1' }));
    const result = lastResult(messages);
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(messages)).toContain('rate limited by the double');
    const mine = double.requests.slice(before).filter((r) => r.kind === 'main');
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.every((r) => r.status === 429)).toBe(true);
  });
});
