import type { EventEnvelope } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startScubaWorld, type ScubaWorld } from './support/scuba-world.js';

/** The in-process `bubble` MCP server: the sdk's catalog, loaded up front, each call through the approval path. */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const chunk = (e: EventEnvelope) => e.data.chunk as { type: string; toolCallId?: string; toolName?: string; output?: unknown };

describe('local bubble tools', () => {
  it('offers the catalog to the model and runs a call after approval, as the bot', async () => {
    world = await startScubaWorld({
      script: [
        { name: 'call', match: { text: 'open a side thread' }, reply: [{ type: 'tool_use', id: 'toolu_mcp1', name: 'mcp__bubble__open_subthread', input: { title: 'Side' } }] },
        { name: 'after', match: { toolResult: { name: 'mcp__bubble__open_subthread' } }, reply: [{ type: 'text', text: 'Opened it.' }] },
      ],
    });
    const w = world;
    w.startBot();
    await w.say('open a side thread');
    await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'message_part' && chunk(e).toolName === 'mcp__bubble__open_subthread'), {
      what: 'the MCP tool call on the thread',
    });
    const first = w.double.requests.find((r) => r.kind === 'main')!;
    const toolNames = ((first.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    expect(toolNames).toEqual(expect.arrayContaining(['mcp__bubble__browse_thread', 'mcp__bubble__open_subthread', 'mcp__bubble__search_principals', 'mcp__bubble__invite_to_thread', 'mcp__bubble__list_artifacts', 'mcp__bubble__read_artifact', 'mcp__bubble__write_artifact']));

    await w.alice.appendEvent(w.threadId, { type: 'tool_call_approval', data: { toolCallId: 'toolu_mcp1', decision: 'allow' } });
    const events = await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_finished'), { what: 'the run to finish', timeoutMs: 15_000 });
    const output = events.find((e) => e.principalId === w.botId && e.type === 'message_part' && chunk(e).type === 'tool-output-available')!;
    const text = JSON.stringify(chunk(output).output);
    const childId = new RegExp(`${w.threadId}\\.sub-[a-z0-9]{5}-[a-z0-9]{3}`).exec(text)?.[0];
    expect(childId).toBeDefined();
    const child = await w.alice.getThread(childId!);
    expect(child).toMatchObject({ parentThreadId: w.threadId, title: 'Side', createdBy: w.botId });
  });
});
