import type { EventEnvelope } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startScubaWorld, type ScubaWorld } from './support/scuba-world.js';

/** The in-process `bubble` MCP server: the sdk's catalog, loaded up front, each call through the approval path. */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const chunk = (e: EventEnvelope) =>
  e.data.chunk as { type: string; toolCallId?: string; toolName?: string; output?: unknown };

describe('local bubble tools', () => {
  it('offers the catalog to the model and runs a call after approval, as the bot', async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'call',
          match: { text: 'open a side thread' },
          reply: [
            { type: 'tool_use', id: 'toolu_mcp1', name: 'mcp__bubble__open_subthread', input: { title: 'Side' } },
          ],
        },
        {
          name: 'after',
          match: { toolResult: { name: 'mcp__bubble__open_subthread' } },
          reply: [{ type: 'text', text: 'Opened it.' }],
        },
      ],
    });
    const w = world;
    w.startBot();
    await w.say('open a side thread');
    await w.waitFor(
      (all) =>
        all.some(
          (e) =>
            e.principalId === w.botId &&
            e.type === 'message_part' &&
            chunk(e).toolName === 'mcp__bubble__open_subthread',
        ),
      {
        what: 'the MCP tool call on the thread',
      },
    );
    const first = w.double.requests.find((r) => r.kind === 'main')!;
    const toolNames = ((first.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    expect(toolNames).toEqual(
      expect.arrayContaining([
        'mcp__bubble__browse_thread',
        'mcp__bubble__open_subthread',
        'mcp__bubble__search_principals',
        'mcp__bubble__invite_to_thread',
        'mcp__bubble__list_artifacts',
        'mcp__bubble__read_artifact',
        'mcp__bubble__write_artifact',
      ]),
    );

    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_mcp1', decision: 'allow' },
    });
    const events = await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_finished'), {
      what: 'the run to finish',
      timeoutMs: 15_000,
    });
    const output = events.find(
      (e) => e.principalId === w.botId && e.type === 'message_part' && chunk(e).type === 'tool-output-available',
    )!;
    const text = JSON.stringify(chunk(output).output);
    const childId = new RegExp(`${w.threadId}\\.sub-[a-z0-9]{5}-[a-z0-9]{3}`).exec(text)?.[0];
    expect(childId).toBeDefined();
    const child = await w.alice.getThread(childId!);
    expect(child).toMatchObject({ parentThreadId: w.threadId, title: 'Side', createdBy: w.botId });
  });
});

describe("a run's tools stay on its thread", () => {
  it('a bot on threads A and B, working in A: browse_thread and invite_to_thread on B are refused, and B is untouched', {
    timeout: 90_000,
  }, async () => {
    world = await startScubaWorld({ script: [] });
    const w = world;
    await w.server.createHuman('carol', 'Carol');
    const { thread } = await w.alice.createThread({ title: 'B' });
    const b = thread.threadId;
    await w.alice.addParticipant(b, w.botId, 'member');
    const headOfB = (await w.alice.getThread(b)).headSeq;
    w.double.setScript([
      {
        name: 'browse B',
        match: { text: 'look at the other thread' },
        reply: [{ type: 'tool_use', id: 'toolu_scopeB1', name: 'mcp__bubble__browse_thread', input: { threadId: b } }],
      },
      {
        name: 'invite to B',
        match: { toolResult: { name: 'mcp__bubble__browse_thread' } },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_scopeB2',
            name: 'mcp__bubble__invite_to_thread',
            input: { principalId: 'carol', threadId: b },
          },
        ],
      },
      {
        name: 'after',
        match: { toolResult: { name: 'mcp__bubble__invite_to_thread' } },
        reply: [{ type: 'text', text: 'Could not.' }],
      },
    ]);
    w.startBot();
    await w.say('look at the other thread');
    for (const toolCallId of ['toolu_scopeB1', 'toolu_scopeB2']) {
      await w.waitFor(
        (all) =>
          all.some(
            (e) =>
              e.principalId === w.botId &&
              e.type === 'message_part' &&
              chunk(e).type === 'tool-approval-request' &&
              chunk(e).toolCallId === toolCallId,
          ),
        { what: `the approval request of ${toolCallId}`, timeoutMs: 30_000 },
      );
      await w.alice.appendEvent(w.threadId, { type: 'tool_call_approval', data: { toolCallId, decision: 'allow' } });
    }
    await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_finished'), {
      what: 'the run to finish',
      timeoutMs: 15_000,
    });
    const refusal = `thread_out_of_scope: thread ${b} is not this run's thread: here the tools act only on ${w.threadId} and its subthreads (${w.threadId}.sub-…)`;
    const last = w.double.requests.filter((r) => r.kind === 'main').at(-1)!.body;
    for (const toolCallId of ['toolu_scopeB1', 'toolu_scopeB2']) {
      const sent = toolResultSent(last, toolCallId);
      expect(sent?.is_error).toBe(true);
      expect(textOf(sent?.content)).toBe(refusal);
    }
    expect((await w.alice.listParticipants(b)).map((grant) => grant.principalId).sort()).toEqual(
      ['alice', w.botId].sort(),
    );
    expect((await w.alice.getThread(b)).headSeq).toBe(headOfB);
  });
});

/** The tool_result block for `toolUseId` in a request the CLI sent to the model. */
function toolResultSent(body: unknown, toolUseId: string): { is_error?: boolean; content?: unknown } | undefined {
  const messages = (body as { messages?: Array<{ content?: unknown }> }).messages ?? [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Array<{
      type?: string;
      tool_use_id?: string;
      is_error?: boolean;
      content?: unknown;
    }>)
      if (block.type === 'tool_result' && block.tool_use_id === toolUseId) return block;
  }
  return undefined;
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((b) => (b as { text?: string }).text ?? '').join('\n')
      : JSON.stringify(content);

/** Asks for the scripted call, answers it with Alice's `tool_call_result`, and returns the thread and what the CLI then sent the model for it. */
async function resultSuppliedBy(w: ScubaWorld, ask: string, toolCallId: string, output: unknown) {
  w.startBot();
  await w.say(ask);
  await w.waitFor(
    (all) =>
      all.some(
        (e) => e.principalId === w.botId && e.type === 'message_part' && chunk(e).type === 'tool-approval-request',
      ),
    { what: 'the approval request' },
  );
  await w.alice.appendEvent(w.threadId, { type: 'tool_call_result', data: { toolCallId, output } });
  const events = await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_finished'), {
    what: 'the run to finish',
  });
  return { events, sent: toolResultSent(w.double.requests.filter((r) => r.kind === 'main').at(-1)!.body, toolCallId) };
}

describe("a participant's tool_call_result", () => {
  it("for a local bubble tool: reaches Claude as the tool's own result (is_error false), and the tool does not run", async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'call',
          match: { text: 'write the notes' },
          reply: [
            {
              type: 'tool_use',
              id: 'toolu_res1',
              name: 'mcp__bubble__write_artifact',
              input: { name: 'notes.md', content: 'draft' },
            },
          ],
        },
        {
          name: 'after',
          match: { toolResult: { name: 'mcp__bubble__write_artifact' } },
          reply: [{ type: 'text', text: 'Thanks for the result.' }],
        },
      ],
    });
    const w = world;
    const { events, sent } = await resultSuppliedBy(w, 'write the notes', 'toolu_res1', {
      name: 'notes.md',
      version: 7,
      note: 'kept elsewhere',
    });
    expect(sent?.is_error ?? false).toBe(false);
    expect(JSON.parse(textOf(sent?.content))).toEqual({ name: 'notes.md', version: 7, note: 'kept elsewhere' });
    const shown = events.find(
      (e) =>
        e.principalId === w.botId &&
        e.type === 'message_part' &&
        chunk(e).type === 'tool-output-available' &&
        chunk(e).toolCallId === 'toolu_res1',
    );
    expect(shown).toBeDefined();
    expect(
      events.some(
        (e) => e.principalId === w.botId && e.type === 'message_part' && chunk(e).type === 'tool-output-error',
      ),
    ).toBe(false);
    expect(await w.alice.listArtifacts(w.threadId)).toEqual([]);
  });

  it('for a built-in tool (the SDK can only allow or deny it): Claude gets a refusal carrying the output, and the thread shows that same text', async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'call',
          match: { text: 'list the files' },
          reply: [
            {
              type: 'tool_use',
              id: 'toolu_res2',
              name: 'Bash',
              input: { command: 'touch listed.txt', description: 'List' },
            },
          ],
        },
        { name: 'after', match: { toolResult: { name: 'Bash' } }, reply: [{ type: 'text', text: 'Seen.' }] },
      ],
    });
    const w = world;
    const { events, sent } = await resultSuppliedBy(w, 'list the files', 'toolu_res2', 'a.txt b.txt');
    expect(sent?.is_error).toBe(true);
    const shown = events.find(
      (e) =>
        e.principalId === w.botId &&
        e.type === 'message_part' &&
        chunk(e).type === 'tool-output-error' &&
        chunk(e).toolCallId === 'toolu_res2',
    );
    expect(shown).toBeDefined();
    expect((shown!.data.chunk as { errorText?: string }).errorText).toBe(textOf(sent?.content));
    expect(textOf(sent?.content)).toContain('a.txt b.txt');
  });
});
