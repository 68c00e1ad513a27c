import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createSdkMcpServer, tool, type CanUseTool } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { blocksOf, harnessFor } from './harness.js';

interface PermissionCall {
  toolName: string;
  input: Record<string, unknown>;
  toolUseID: string;
  mcpServer?: { name: string; source: string } | undefined;
}

function recordingCanUseTool(decide: (call: PermissionCall) => Awaited<ReturnType<CanUseTool>>): {
  calls: PermissionCall[];
  canUseTool: CanUseTool;
} {
  const calls: PermissionCall[] = [];
  return {
    calls,
    canUseTool: async (toolName, input, options) => {
      const call = { toolName, input, toolUseID: options.toolUseID, mcpServer: options.mcpServer };
      calls.push(call);
      return decide(call);
    },
  };
}

const touchScript = (file: string) => [
  {
    match: { text: 'make the file' },
    reply: [
      { type: 'tool_use' as const, name: 'Bash', input: { command: `touch ${file}`, description: 'create a file' } },
    ],
  },
  {
    match: { toolResult: { name: 'Bash', isError: false } },
    reply: [{ type: 'text' as const, text: 'The tool ran.' }],
  },
  {
    match: { toolResult: { name: 'Bash', isError: true } },
    reply: [{ type: 'text' as const, text: 'The tool was refused.' }],
  },
];

describe.concurrent('tools through canUseTool, MCP and thinking (real CLI against the model double)', () => {
  it('allows a write through canUseTool: the tool runs', async (ctx) => {
    const h = await harnessFor(ctx, touchScript('allowed.txt'));
    const perm = recordingCanUseTool(() => ({ behavior: 'allow' }));
    const s = h.start({ canUseTool: perm.canUseTool });
    s.live.push('make the file');
    const result = await s.result();
    expect(result.result).toBe('The tool ran.');
    expect(perm.calls).toHaveLength(1);
    expect(perm.calls[0]).toMatchObject({ toolName: 'Bash', input: { command: 'touch allowed.txt' } });
    expect(existsSync(join(h.cwd, 'allowed.txt'))).toBe(true);
    const toolResult = s
      .of('user')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_result');
    expect(toolResult).toMatchObject({ tool_use_id: perm.calls[0]!.toolUseID, is_error: false });
    await s.record('tool-allowed');
  });

  it('denies through canUseTool: an error tool_result with our message, the turn continues, the denial is listed', async (ctx) => {
    const h = await harnessFor(ctx, touchScript('denied.txt'));
    const perm = recordingCanUseTool(() => ({ behavior: 'deny', message: 'Not in this thread, please.' }));
    const s = h.start({ canUseTool: perm.canUseTool });
    s.live.push('make the file');
    const result = await s.result();
    expect(result.result).toBe('The tool was refused.');
    expect(existsSync(join(h.cwd, 'denied.txt'))).toBe(false);
    const toolResult = s
      .of('user')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_result');
    expect(toolResult).toMatchObject({ is_error: true, content: 'Not in this thread, please.' });
    expect(result.permission_denials).toEqual([
      {
        tool_name: 'Bash',
        tool_use_id: perm.calls[0]!.toolUseID,
        tool_input: { command: 'touch denied.txt', description: 'create a file' },
      },
    ]);
    await s.record('tool-denied');
  });

  it('allows with updatedInput: the tool runs on the rewritten input while the assistant block shows the original', async (ctx) => {
    const h = await harnessFor(ctx, touchScript('original.txt'));
    const perm = recordingCanUseTool((call) => ({
      behavior: 'allow',
      updatedInput: { ...call.input, command: 'touch rewritten.txt' },
    }));
    const s = h.start({ canUseTool: perm.canUseTool });
    s.live.push('make the file');
    const result = await s.result();
    expect(result.result).toBe('The tool ran.');
    expect(existsSync(join(h.cwd, 'rewritten.txt'))).toBe(true);
    expect(existsSync(join(h.cwd, 'original.txt'))).toBe(false);
    const toolUse = s
      .of('assistant')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'Bash', input: { command: 'touch original.txt' } });
    await s.record('tool-allowed-updated-input');
  });

  it('runs an in-process MCP tool with alwaysLoad: in the API tools, through canUseTool, handler in this process', async (ctx) => {
    const h = await harnessFor(ctx, [
      {
        match: { text: 'echo via mcp' },
        reply: [{ type: 'tool_use', name: 'mcp__bubble__echo', input: { text: 'hello' } }],
      },
      {
        match: { toolResult: { name: 'mcp__bubble__echo' } },
        reply: [{ type: 'text', text: 'The MCP tool answered.' }],
      },
    ]);
    const handled: string[] = [];
    const echo = tool('echo', 'Echo the given text back', { text: z.string() }, async (args) => {
      handled.push(args.text);
      return { content: [{ type: 'text', text: `echoed:${args.text}` }] };
    });
    const bubble = createSdkMcpServer({ name: 'bubble', version: '1.0.0', tools: [echo], alwaysLoad: true });
    const perm = recordingCanUseTool(() => ({ behavior: 'allow' }));
    const s = h.start({ mcpServers: { bubble }, canUseTool: perm.canUseTool });
    s.live.push('echo via mcp');
    const result = await s.result();
    expect(result.result).toBe('The MCP tool answered.');
    expect(handled).toEqual(['hello']);
    expect(perm.calls[0]).toMatchObject({
      toolName: 'mcp__bubble__echo',
      mcpServer: { name: 'bubble', source: 'sdk' },
    });
    const init = s.of('system', 'init')[0]!;
    expect(init.tools).toContain('mcp__bubble__echo');
    expect(init.mcp_servers).toEqual([expect.objectContaining({ name: 'bubble', status: 'connected' })]);
    const firstRequest = h.double.requests.find((r) => r.kind === 'main')!;
    const apiTools = ((firstRequest.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    expect(apiTools).toContain('mcp__bubble__echo');
    const toolResult = s
      .of('user')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_result');
    expect(toolResult).toMatchObject({ content: [{ type: 'text', text: 'echoed:hello' }] });
    await s.record('mcp-tool');
  });

  it('streams thinking: thinking deltas and signature, a thinking block, replayed to the API next turn', async (ctx) => {
    const h = await harnessFor(ctx, [
      {
        match: { text: 'think first' },
        reply: [
          { type: 'thinking', thinking: 'Let me think hard about this. ', signature: 'c2lnLWRvdWJsZQ==' },
          { type: 'text', text: 'Thought about it.' },
        ],
      },
      { match: { text: 'and again' }, reply: [{ type: 'text', text: 'Second turn.' }] },
    ]);
    const s = h.start();
    s.live.push('think first');
    const r1 = await s.result(1);
    expect(r1.result).toBe('Thought about it.');
    const deltas = s
      .of('stream_event')
      .map((m) => (m.event as { delta?: { type?: string; thinking?: string } }).delta)
      .filter(Boolean);
    expect(
      deltas
        .filter((d) => d!.type === 'thinking_delta')
        .map((d) => d!.thinking)
        .join(''),
    ).toBe('Let me think hard about this. ');
    expect(deltas.some((d) => d!.type === 'signature_delta')).toBe(true);
    const thinking = s
      .of('assistant')
      .flatMap(blocksOf)
      .find((b) => b.type === 'thinking');
    expect(thinking).toEqual({
      type: 'thinking',
      thinking: 'Let me think hard about this. ',
      signature: 'c2lnLWRvdWJsZQ==',
    });
    s.live.push('and again');
    await s.result(2);
    const second = h.double.requests.filter((r) => r.kind === 'main')[1]!;
    const replayed = (second.body as { messages: Array<{ role: string; content: unknown }> }).messages.find(
      (m) => m.role === 'assistant',
    );
    expect(replayed?.content).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'thinking', signature: 'c2lnLWRvdWJsZQ==' })]),
    );
    await s.record('thinking');
  });

  it('denies with interrupt: the turn ends aborted_tools and the standard refusal replaces our message', async (ctx) => {
    const h = await harnessFor(ctx, touchScript('stopped.txt'));
    const perm = recordingCanUseTool(() => ({ behavior: 'deny', message: 'Stop everything.', interrupt: true }));
    const s = h.start({ canUseTool: perm.canUseTool });
    s.live.push('make the file');
    const result = await s.result();
    expect(result).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      terminal_reason: 'aborted_tools',
    });
    expect(s.live.classify(result as never).kind).toBe('interrupted');
    expect(existsSync(join(h.cwd, 'stopped.txt'))).toBe(false);
    const toolResult = s
      .of('user')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_result');
    expect(toolResult).toMatchObject({ is_error: true });
    expect(JSON.stringify(toolResult)).not.toContain('Stop everything.');
    await s.record('tool-denied-interrupt');
  });

  it('answers AskUserQuestion through canUseTool with updatedInput answers', async (ctx) => {
    const question = 'Which color should the bubble be?';
    const h = await harnessFor(ctx, [
      {
        match: { text: 'ask me' },
        reply: [
          {
            type: 'tool_use',
            name: 'AskUserQuestion',
            input: {
              questions: [
                {
                  question,
                  header: 'Color',
                  multiSelect: false,
                  options: [
                    { label: 'Blue', description: 'calm' },
                    { label: 'Red', description: 'loud' },
                  ],
                },
              ],
            },
          },
        ],
      },
      { match: { toolResult: { name: 'AskUserQuestion' } }, reply: [{ type: 'text', text: 'Blue it is.' }] },
    ]);
    const perm = recordingCanUseTool((call) => ({
      behavior: 'allow',
      updatedInput: { ...call.input, answers: { [question]: 'Blue' } },
    }));
    const s = h.start({ canUseTool: perm.canUseTool, tools: ['Bash', 'AskUserQuestion'] });
    s.live.push('ask me');
    const result = await s.result();
    expect(result.result).toBe('Blue it is.');
    expect(perm.calls.map((c) => c.toolName)).toEqual(['AskUserQuestion']);
    const toolResult = s
      .of('user')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_result');
    expect(JSON.stringify(toolResult)).toContain('Blue');
    const answered = h.double.requests.find((r) => r.toolResults.some((t) => t.toolName === 'AskUserQuestion'))!;
    expect(JSON.stringify((answered.body as { messages: unknown[] }).messages.at(-1))).toContain(
      `\\"${question}\\"=\\"Blue\\"`,
    );
    await s.record('ask-user-question');
  });
});
