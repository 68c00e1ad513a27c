import type { Script } from '@bubble/model-double';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { runText, startScubaWorld, waitForLog, type ScubaWorld } from './support/scuba-world.js';

/** Sub-agents become subthreads, foreground and background, with the real CLI. */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const agentCall = (background: boolean) => ({
  type: 'tool_use' as const,
  id: background ? 'toolu_bg1' : 'toolu_fg1',
  name: 'Agent',
  input: {
    description: 'Check things',
    prompt: 'Please check the things',
    subagent_type: 'general-purpose',
    run_in_background: background,
  },
});

const withAgents = (w: ScubaWorld) =>
  w.writeConfig({ claude: { workspaceRoot: './workspaces', configDir: './claude-home', tools: ['Bash', 'Agent'] } });
const chunk = (e: EventEnvelope) =>
  e.data.chunk as {
    type: string;
    toolCallId?: string;
    toolName?: string;
    providerMetadata?: { bubble?: { childThreadId?: string } };
  };
const finishedRuns = (events: EventEnvelope[], who: string) =>
  events.filter((e) => e.principalId === who && e.type === 'run_finished');

function childOf(w: ScubaWorld, events: EventEnvelope[]): string | undefined {
  const input = events.find(
    (e) =>
      e.principalId === w.botId &&
      e.type === 'message_part' &&
      chunk(e).type === 'tool-input-available' &&
      chunk(e).toolName === 'Agent',
  );
  return input ? chunk(input).providerMetadata?.bubble?.childThreadId : undefined;
}

describe('sub-agents become subthreads', () => {
  it('foreground: the parent shows the Agent call naming the child; the child carries the sub-agent run', async () => {
    const script: Script = [
      { name: 'spawn', match: { text: 'use a helper', subagent: false }, reply: [agentCall(false)] },
      { name: 'sub', match: { subagent: true }, reply: [{ type: 'text', text: 'Sub-agent report: all good.' }] },
      {
        name: 'after',
        match: { toolResult: { name: 'Agent' } },
        reply: [{ type: 'text', text: 'The helper reported back.' }],
      },
    ];
    world = await startScubaWorld({ script });
    const w = world;
    const bot = w.startBot({ configPath: withAgents(w) });
    await w.say('use a helper');
    const parent = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1, {
      what: 'the parent run to finish',
    });
    const child = childOf(w, parent);
    expect(child).toMatch(new RegExp(`^${w.threadId}\\.sub-[a-z0-9]{5}-[a-z0-9]{3}$`));
    const runId = parent.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.runId as string;
    // How many deltas the text takes depends on timing (coalescing); the order of chunk kinds does not.
    const kinds = parent
      .filter((e) => e.principalId === w.botId && e.type === 'message_part')
      .map((e) => chunk(e).type);
    expect(kinds.filter((kind, i) => kind !== kinds[i - 1])).toEqual([
      'tool-input-available',
      'tool-output-available',
      'text-start',
      'text-delta',
      'text-end',
    ]);
    expect(runText(parent, runId)).toBe('The helper reported back.');

    const sub = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1, {
      threadId: child!,
      what: 'the child run to finish',
    });
    const subRun = sub.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.runId as string;
    expect(runText(sub, subRun)).toBe('Sub-agent report: all good.');
    expect(finishedRuns(sub, w.botId)[0]!.data).toMatchObject({ runId: subRun, status: 'completed' });
    // The bot runs an ordinary session on the subthread it joined.
    const deadline = Date.now() + 10_000;
    while (!bot.logs.some((l) => l.msg === 'thread starts' && l.threadId === child) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(bot.logs.some((l) => l.msg === 'thread starts' && l.threadId === child)).toBe(true);
  });

  it('background: the parent run ends at once; the child run ends at the task notification; the unsolicited turn gets a run of its own', async () => {
    const script: Script = [
      { name: 'spawn', match: { text: 'research in the background', subagent: false }, reply: [agentCall(true)] },
      {
        name: 'launched',
        match: { toolResult: { name: 'Agent' } },
        reply: [{ type: 'text', text: 'Launched in the background.' }],
      },
      {
        name: 'sub',
        match: { subagent: true },
        delayMs: 300,
        reply: [{ type: 'text', text: 'Background report: 42.' }],
      },
      {
        name: 'notified',
        match: { taskNotification: true },
        reply: [{ type: 'text', text: 'The background helper finished.' }],
      },
    ];
    world = await startScubaWorld({ script });
    const w = world;
    w.startBot({ configPath: withAgents(w) });
    await w.say('research in the background');
    const parent = await w.waitFor((all) => finishedRuns(all, w.botId).length === 2, {
      what: 'the parent run and the unsolicited run',
    });
    const [first, second] = parent.filter((e) => e.principalId === w.botId && e.type === 'run_started');
    expect(first!.data.replyTo).toEqual([
      parent.find((e) => e.principalId === 'alice' && e.type === 'run_started')!.seq,
    ]);
    expect(second!.data.replyTo).toBeUndefined();
    expect(runText(parent, first!.data.runId as string)).toBe('Launched in the background.');
    expect(runText(parent, second!.data.runId as string)).toBe('The background helper finished.');

    const child = childOf(w, parent)!;
    const sub = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1, {
      threadId: child,
      what: 'the child run',
    });
    const subRun = sub.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.runId as string;
    expect(runText(sub, subRun)).toBe('Background report: 42.');
    expect(finishedRuns(sub, w.botId)[0]!.data.status).toBe('completed');
  });
});

describe('sub-agent tool approvals', () => {
  it.each([false, true])(
    "a sub-agent's tool call shows on its subthread; its approval request and answer are on the parent thread (background: %s)",
    async (background) => {
      const call = agentCall(background);
      const script: Script = [
        { name: 'spawn', match: { text: 'delegate the file', subagent: false }, reply: [call] },
        {
          name: 'sub-tool',
          match: { subagent: true, text: 'Please check the things' },
          reply: [
            {
              type: 'tool_use',
              id: 'toolu_subw1',
              name: 'Bash',
              input: { command: 'touch sub.txt', description: 'sub file' },
            },
          ],
        },
        {
          name: 'sub-done',
          match: { subagent: true, toolResult: { name: 'Bash' } },
          reply: [{ type: 'text', text: 'Made sub.txt.' }],
        },
        {
          name: 'after',
          match: { toolResult: { name: 'Agent' } },
          reply: [{ type: 'text', text: background ? 'Launched it.' : 'Delegated and done.' }],
        },
        {
          name: 'notified',
          match: { taskNotification: true },
          reply: [{ type: 'text', text: 'The helper finished.' }],
          times: 'always',
        },
      ];
      world = await startScubaWorld({ script });
      const w = world;
      const bot = w.startBot({ configPath: withAgents(w) });
      await w.say('delegate the file');
      const parent = await w.waitFor((all) => childOf(w, all) !== undefined, { what: 'the subthread' });
      const child = childOf(w, parent)!;
      await w.waitFor(
        (all) =>
          all.some(
            (e) => e.principalId === w.botId && e.type === 'message_part' && chunk(e).toolCallId === 'toolu_subw1',
          ),
        {
          threadId: child,
          what: "the sub-agent's tool call on the subthread",
        },
      );
      // The request is on the parent thread, in a run of the bot, naming the subthread, the tool and its input.
      const asked = await w.waitFor(
        (all) => all.some((e) => e.type === 'message_part' && chunk(e).type === 'tool-approval-request'),
        { what: 'the approval request on the parent' },
      );
      const request = asked.find((e) => e.type === 'message_part' && chunk(e).type === 'tool-approval-request')!;
      expect(request.principalId).toBe(w.botId);
      expect(request.data.chunk).toEqual({
        type: 'tool-approval-request',
        approvalId: 'toolu_subw1',
        toolCallId: 'toolu_subw1',
        providerMetadata: {
          bubble: {
            approvers: ['alice'],
            threadId: child,
            toolName: 'Bash',
            input: { command: 'touch sub.txt', description: 'sub file' },
          },
        },
      });
      // In a run of its own, open as long as the call waits (a background agent outlives the turn that launched it).
      const requestRun = request.data.runId as string;
      expect(requestRun).toMatch(/^approval-toolu_subw1-[0-9a-f]{8}$/);
      expect(
        asked.some((e) => e.type === 'run_started' && e.principalId === w.botId && e.data.runId === requestRun),
      ).toBe(true);
      // None on the subthread: the people answer where they are.
      expect(
        (await w.events(child)).some((e) => e.type === 'message_part' && chunk(e).type === 'tool-approval-request'),
      ).toBe(false);
      expect(
        bot.logs.find((l) => l.msg === 'tool call waits for approval' && l.toolCallId === 'toolu_subw1')?.agentId,
      ).toEqual(expect.any(String));

      await w.alice.appendEvent(w.threadId, {
        type: 'tool_call_approval',
        data: { toolCallId: 'toolu_subw1', decision: 'allow' },
      });
      const sub = await w.waitFor((all) => finishedRuns(all, w.botId).length >= 1, {
        threadId: child,
        what: 'the child run',
      });
      expect(
        sub.filter((e) => e.principalId === w.botId && e.type === 'message_part').map((e) => chunk(e).type),
      ).toContain('tool-output-available');
      expect(
        bot.logs.some((l) => l.msg === 'tool call answered' && l.toolCallId === 'toolu_subw1' && l.by === 'alice'),
      ).toBe(true);
      // The run that carried the request is closed, whichever it was.
      await w.waitFor((all) => all.some((e) => e.type === 'run_finished' && e.data.runId === requestRun), {
        what: 'the request run to close',
      });
      if (!background) {
        const turn = (all: EventEnvelope[]) =>
          all.find((e) => e.principalId === w.botId && e.type === 'run_started' && e.data.runId !== requestRun)!.data
            .runId as string;
        const done = await w.waitFor(
          (all) => all.some((e) => e.type === 'run_finished' && e.data.runId === turn(all)),
          { what: 'the turn to end' },
        );
        expect(runText(done, turn(done))).toBe('Delegated and done.');
      }
    },
  );
});

describe("a background sub-agent's approval request", () => {
  it('is stopped by Stop on the run that carries it: the call is denied and that run closes', async () => {
    const script: Script = [
      { name: 'spawn', match: { text: 'delegate the file', subagent: false }, reply: [agentCall(true)] },
      {
        name: 'sub-tool',
        match: { subagent: true, text: 'Please check the things' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_subw2',
            name: 'Bash',
            input: { command: 'touch sub.txt', description: 'sub file' },
          },
        ],
      },
      {
        name: 'sub-done',
        match: { subagent: true, toolResult: { name: 'Bash' } },
        reply: [{ type: 'text', text: 'Could not make it.' }],
      },
      { name: 'after', match: { toolResult: { name: 'Agent' } }, reply: [{ type: 'text', text: 'Launched it.' }] },
      {
        name: 'notified',
        match: { taskNotification: true },
        reply: [{ type: 'text', text: 'The helper finished.' }],
        times: 'always',
      },
    ];
    world = await startScubaWorld({ script });
    const w = world;
    w.startBot({ configPath: withAgents(w) });
    await w.say('delegate the file');
    const asked = await w.waitFor(
      (all) => all.some((e) => e.type === 'message_part' && chunk(e).type === 'tool-approval-request'),
      { what: 'the approval request' },
    );
    const runId = asked.find((e) => e.type === 'message_part' && chunk(e).type === 'tool-approval-request')!.data
      .runId as string;
    expect(runId).toMatch(/^approval-toolu_subw2-[0-9a-f]{8}$/);
    await w.alice.appendEvent(w.threadId, { type: 'run_interrupt_requested', data: { runId, reason: 'not now' } });
    const closed = await w.waitFor((all) => all.some((e) => e.type === 'run_finished' && e.data.runId === runId), {
      what: 'the approval run to close',
    });
    expect(closed.find((e) => e.type === 'run_finished' && e.data.runId === runId)!.data).toEqual({
      runId,
      status: 'interrupted',
      interruptedBy: 'alice',
      interruptReason: 'not now',
    });
    expect(closed.find((e) => e.principalId === w.botId && e.type === 'tool_call_approval')?.data).toEqual({
      toolCallId: 'toolu_subw2',
      decision: 'deny',
      reason: 'Denied: the run was interrupted while Bash waited for approval.',
    });
    const child = childOf(w, closed)!;
    const sub = await w.waitFor(
      (all) => all.some((e) => e.type === 'message_part' && chunk(e).type === 'tool-output-denied'),
      { threadId: child, what: 'the denial on the subthread' },
    );
    expect(
      sub.find((e) => e.type === 'message_part' && chunk(e).type === 'tool-output-denied')!.data.chunk,
    ).toMatchObject({ toolCallId: 'toolu_subw2' });
  });
});

/** A background sub-agent that streams slowly (100 words, 200 ms apart), for the interrupt tests. */
function slowBackgroundAgentScript(): Script {
  return [
    { name: 'spawn', match: { text: 'research in the background', subagent: false }, reply: [agentCall(true)] },
    { name: 'launched', match: { toolResult: { name: 'Agent' } }, reply: [{ type: 'text', text: 'Launched.' }] },
    {
      name: 'sub',
      match: { subagent: true },
      reply: [{ type: 'text', text: Array.from({ length: 100 }, (_, i) => `s${i}`).join(' '), delayMs: 200 }],
    },
    {
      name: 'notified',
      match: { taskNotification: true },
      reply: [{ type: 'text', text: 'The helper was stopped.' }],
      times: 'always',
    },
  ];
}

describe('interrupting a sub-agent', () => {
  it('a background sub-agent is stopped by an interrupt naming its run (appended on the parent thread)', async () => {
    world = await startScubaWorld({ script: slowBackgroundAgentScript() });
    const w = world;
    const bot = w.startBot({ configPath: withAgents(w) });
    await w.say('research in the background');
    const parent = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1 && childOf(w, all) !== undefined, {
      what: 'the parent run',
    });
    const child = childOf(w, parent)!;
    const running = await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_started'), {
      threadId: child,
      what: 'the child run',
    });
    const childRun = running.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.runId as string;
    await w.alice.appendEvent(w.threadId, {
      type: 'run_interrupt_requested',
      data: { runId: childRun, reason: 'not needed' },
    });
    const sub = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1, {
      threadId: child,
      what: 'the child run to end',
    });
    expect(finishedRuns(sub, w.botId)[0]!.data).toMatchObject({
      runId: childRun,
      status: 'interrupted',
      interruptedBy: 'alice',
      interruptReason: 'not needed',
    });
    expect(bot.logs.some((l) => l.msg === 'sub-agent interrupt requested' && l.background === true)).toBe(true);
  });
});

describe('interrupting a sub-agent on its subthread', () => {
  it('an interrupt appended on the subthread reaches the session that runs the sub-agent', async () => {
    world = await startScubaWorld({ script: slowBackgroundAgentScript() });
    const w = world;
    w.startBot({ configPath: withAgents(w) });
    await w.say('research in the background');
    const parent = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1 && childOf(w, all) !== undefined, {
      what: 'the parent run',
    });
    const child = childOf(w, parent)!;
    const running = await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_started'), {
      threadId: child,
      what: 'the child run',
    });
    const childRun = running.find((e) => e.principalId === w.botId && e.type === 'run_started')!.data.runId as string;
    // The subthread starts with only the bot: it invites alice (as the invite_to_thread tool would).
    const asBot = new BubbleClient({ url: w.server.url, token: w.botToken });
    await asBot.addParticipant(child, 'alice', 'member');
    asBot.close();
    await w.alice.appendEvent(child, { type: 'run_interrupt_requested', data: { runId: childRun } });
    const sub = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1, {
      threadId: child,
      what: 'the child run to end',
    });
    expect(finishedRuns(sub, w.botId)[0]!.data).toMatchObject({
      runId: childRun,
      status: 'interrupted',
      interruptedBy: 'alice',
    });
  });
});

describe("a sub-agent's local bubble tools", () => {
  it('work on its subthread by default, each call with its own context (matched by tool-call id)', async () => {
    const script: Script = [
      { name: 'spawn', match: { text: 'have a helper take notes', subagent: false }, reply: [agentCall(false)] },
      {
        name: 'sub-write',
        match: { subagent: true, text: 'Please check the things' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_subw1',
            name: 'mcp__bubble__write_artifact',
            input: { name: 'notes.md', content: 'written by the sub-agent' },
          },
        ],
      },
      {
        name: 'sub-after',
        match: { subagent: true, toolResult: { name: 'mcp__bubble__write_artifact' } },
        reply: [{ type: 'text', text: 'Notes written.' }],
      },
      {
        name: 'after',
        match: { toolResult: { name: 'Agent' } },
        reply: [{ type: 'text', text: 'The helper took notes.' }],
      },
    ];
    world = await startScubaWorld({ script });
    const w = world;
    w.startBot({ configPath: withAgents(w) });
    await w.say('have a helper take notes');
    // The sub-agent's call is announced on the parent thread; Alice (the bot's owner) allows it there.
    await w.waitFor(
      (all) =>
        all.some(
          (e) =>
            e.principalId === w.botId &&
            e.type === 'message_part' &&
            chunk(e).type === 'tool-approval-request' &&
            chunk(e).toolCallId === 'toolu_subw1',
        ),
      {
        what: "the sub-agent's call announced",
      },
    );
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_subw1', decision: 'allow' },
    });
    const parent = await w.waitFor(
      (all) => finishedRuns(all, w.botId).some((e) => !String(e.data.runId).startsWith('approval-')),
      { what: 'the parent run to finish' },
    );
    const child = childOf(w, parent)!;
    expect((await w.alice.listArtifacts(child)).map((a) => a.name)).toEqual(['notes.md']);
    expect(await w.alice.listArtifacts(w.threadId)).toEqual([]);
  });
});

describe("a sub-agent's subthread session", () => {
  it('ends when its sub-agent ends, and is not followed again after a restart', async () => {
    const script: Script = [
      { name: 'spawn', match: { text: 'use a helper', subagent: false }, reply: [agentCall(false)] },
      { name: 'sub', match: { subagent: true }, reply: [{ type: 'text', text: 'Sub-agent report.' }] },
      {
        name: 'after',
        match: { toolResult: { name: 'Agent' } },
        reply: [{ type: 'text', text: 'Done.' }],
        times: 'always',
      },
    ];
    world = await startScubaWorld({ script });
    const w = world;
    const config = withAgents(w);
    const bot = w.startBot({ configPath: config });
    await w.say('use a helper');
    const parent = await w.waitFor((all) => finishedRuns(all, w.botId).length === 1, {
      what: 'the parent run to finish',
    });
    const child = childOf(w, parent)!;
    await waitForLog(
      bot,
      (l) => l.msg === 'thread released; no longer followed' && l.threadId === child,
      'the subthread released',
    );
    await waitForLog(
      bot,
      (l) => l.msg === 'session stopping' && l.threadId === child && l.reason === 'released',
      "the subthread's session stopped",
    );
    expect(finishedRuns(await w.events(child), w.botId)).toHaveLength(1);
    await bot.stop();
    const again = w.startBot({ configPath: config });
    await waitForLog(
      again,
      (l) => l.msg === 'thread starts' && l.threadId === w.threadId,
      'the parent thread followed again',
    );
    await waitForLog(
      again,
      (l) => l.msg === 'thread released earlier; not followed' && l.threadId === child,
      'the subthread left alone',
    );
    expect(again.logs.some((l) => l.msg === 'thread starts' && l.threadId === child)).toBe(false);
  });
});
