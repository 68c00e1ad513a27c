/**
 * End to end: the real Agent SDK and its bundled Claude Code CLI, offline,
 * against the double. Each query is a cold CLI start (about 1 s).
 */
import { query, type Options, type SDKMessage, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
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
      PATH: process.env.PATH ?? '/usr/bin:/bin',
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

/** A minimal push/pull prompt stream for streaming input. */
function pushable(): { iterable: AsyncIterable<SDKUserMessage>; push: (text: string) => void; end: () => void } {
  const queue: SDKUserMessage[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  return {
    push(text) {
      queue.push({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null });
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    iterable: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const next = queue.shift();
          if (next !== undefined) yield next;
          else if (ended) return;
          else await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    },
  };
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
    expect(mine[0]!.sessionId).toBe(result.session_id);
  });

  it('runs a scripted tool call and matches the tool result by tool name', async () => {
    double.setScript([
      {
        match: { text: 'list' },
        reply: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', name: 'Bash', input: { command: 'echo made-by-bash', description: 'Echo' } },
        ],
      },
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

  it('scripts one session apart from another by the SDK sessionId option', async () => {
    const sessionId = '6f1c3a52-8d0e-4b7a-9c1e-2f4d5b6a7c8d';
    double.setScript([
      { match: { sessionId }, reply: [{ type: 'text', text: 'Reply for that session.' }] },
      { reply: [{ type: 'text', text: 'Reply for anyone.' }] },
    ]);
    const { messages } = await collect('hi', options({ sessionId }));
    const result = lastResult(messages);
    expect(result.session_id).toBe(sessionId);
    expect(result.subtype === 'success' ? result.result : null).toBe('Reply for that session.');
  });

  it('surfaces a 429 as an error result once retries run out', async () => {
    double.setScript([
      { times: 'always', error: { status: 429, retryAfterSeconds: 0, message: 'rate limited by the double' } },
    ]);
    const before = double.requests.length;
    const { messages } = await collect('hi', options({}, { CLAUDE_CODE_MAX_RETRIES: '1' }));
    const result = lastResult(messages);
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(messages)).toContain('rate limited by the double');
    const mine = double.requests.slice(before).filter((r) => r.kind === 'main');
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.every((r) => r.status === 429)).toBe(true);
  });

  /**
   * The main loop delegates to `subagentType`, which runs one Bash call; the
   * double must answer the four requests with rules 0..3, telling the
   * sub-agent's two requests apart from the main loop's.
   */
  async function delegateAnEcho(subagentType: string, extra: Partial<Options> = {}): Promise<SDKMessage[]> {
    double.setScript([
      {
        match: { text: 'delegate', subagent: false },
        reply: [
          {
            type: 'tool_use',
            name: 'Agent',
            input: {
              description: 'Echo a word',
              prompt: 'echo the word',
              subagent_type: subagentType,
              run_in_background: false,
            },
          },
        ],
      },
      {
        match: { subagent: true, text: 'echo the word' },
        reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo sub-word', description: 'Echo' } }],
      },
      { match: { subagent: true, toolResult: { name: 'Bash' } }, reply: [{ type: 'text', text: 'Echoed sub-word.' }] },
      {
        match: { subagent: false, toolResult: { name: 'Agent' } },
        reply: [{ type: 'text', text: `The ${subagentType} agent is done.` }],
      },
    ]);
    const before = double.requests.length;
    const { messages, thrown } = await collect('delegate it', options({ tools: ['Bash', 'Agent'], ...extra }));
    expect(thrown).toBeNull();
    const result = lastResult(messages);
    expect(result.subtype === 'success' ? result.result : null).toBe(`The ${subagentType} agent is done.`);
    const mine = double.requests.slice(before);
    expect(mine.map((r) => [r.kind, r.rule?.index ?? null])).toEqual([
      ['main', 0],
      ['subagent', 1],
      ['subagent', 2],
      ['main', 3],
    ]);
    return messages;
  }

  it("tells a foreground sub-agent's requests apart from the main loop's", async () => {
    const messages = await delegateAnEcho('general-purpose');
    const agentToolUse = messages.find((m) => m.type === 'assistant' && m.parent_tool_use_id === null);
    expect(messages.some((m) => m.type === 'assistant' && m.parent_tool_use_id !== null)).toBe(true);
    expect(JSON.stringify(agentToolUse)).toContain('"name":"Agent"');
  });

  it("tells a custom agent's requests (options.agents) apart from the main loop's", async () => {
    // A custom agent's system prompt is its own `prompt` after the SDK's opening line, without the built-in agents' mark.
    await delegateAnEcho('echoer', {
      agents: {
        echoer: {
          description: 'Echoes a word with Bash.',
          prompt: 'You echo the word you are given, using Bash.',
          tools: ['Bash'],
        },
      },
    });
  });

  it('matches the turn the CLI starts by itself after a background agent', async () => {
    double.setScript([
      {
        match: { text: 'delegate', subagent: false },
        reply: [
          {
            type: 'tool_use',
            name: 'Agent',
            input: {
              description: 'Count',
              prompt: 'count in the background',
              subagent_type: 'general-purpose',
              run_in_background: true,
            },
          },
        ],
      },
      { match: { subagent: false, toolResult: { name: 'Agent' } }, reply: [{ type: 'text', text: 'Launched.' }] },
      { match: { subagent: true }, delayMs: 200, reply: [{ type: 'text', text: 'Counted to three.' }] },
      {
        match: { subagent: false, taskNotification: true },
        reply: [{ type: 'text', text: 'The background count finished.' }],
      },
    ]);
    const before = double.requests.length;
    const { messages, thrown } = await collect('delegate it', options({ tools: ['Agent'] }));
    expect(thrown).toBeNull();
    const results = messages
      .filter((m) => m.type === 'result')
      .map((m) => (m.subtype === 'success' ? m.result : m.subtype));
    expect(results).toEqual(['Launched.', 'The background count finished.']);
    const last = double.requests.slice(before).at(-1)!;
    expect(last.rule?.index).toBe(3);
    expect(last.taskNotification).toMatchObject({ status: 'completed', toolUseId: expect.stringMatching(/^toolu_/) });
  });

  it('records an interrupted stream as aborted, and the query stays usable', async () => {
    double.setScript([
      { match: { text: 'slow' }, reply: [{ type: 'text', text: 'word '.repeat(100), delayMs: 50 }] },
      { match: { text: 'after' }, reply: [{ type: 'text', text: 'Still here.' }] },
    ]);
    const before = double.requests.length;
    const input = pushable();
    const q = query({ prompt: input.iterable, options: options() });
    input.push('slow please');
    const results: SDKMessage[] = [];
    let interrupted = false;
    for await (const m of q) {
      if (!interrupted && m.type === 'stream_event' && m.event.type === 'content_block_delta') {
        interrupted = true;
        await q.interrupt();
      }
      if (m.type === 'result') {
        results.push(m);
        if (results.length === 1) input.push('after that');
        else input.end();
      }
    }
    expect(results.map((r) => (r.type === 'result' ? r.subtype : null))).toEqual(['error_during_execution', 'success']);
    const mine = double.requests.slice(before).filter((r) => r.kind === 'main');
    expect(mine.map((r) => [r.rule?.index ?? null, r.completion])).toEqual([
      [0, 'aborted'],
      [1, 'completed'],
    ]);
    expect(mine[1]!.lastUserText).toContain('after that');
  });

  it('answers the session-title side request without consuming a rule', async () => {
    double.setScript([{ match: { subagent: false }, reply: [{ type: 'text', text: 'Only reply.' }] }]);
    const before = double.requests.length;
    const input = pushable();
    // Non-essential traffic on: the CLI asks for a session title beside the turn.
    const q = query({ prompt: input.iterable, options: options({}, { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '' }) });
    input.push('a message about fish');
    let result: SDKMessage | undefined;
    for await (const m of q) {
      if (m.type === 'result') {
        result = m;
        await double.waitForRequest((r) => r.seq >= before && r.kind === 'title' && r.completion !== 'pending');
        input.end();
      }
    }
    expect(result?.type === 'result' && result.subtype === 'success' ? result.result : null).toBe('Only reply.');
    const mine = double.requests.slice(before).filter((r) => r.kind === 'main' || r.kind === 'title');
    expect(mine.map((r) => [r.kind, r.rule?.index ?? null, r.unmatched]).sort()).toEqual([
      ['main', 0, false],
      ['title', null, false],
    ]);
    expect(mine.find((r) => r.kind === 'title')!.lastUserText).toContain('a message about fish');
  });
});
