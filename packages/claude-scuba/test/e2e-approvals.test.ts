import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Script } from '@bubble/model-double';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startScubaWorld, waitForLog, type ScubaWorld } from './support/scuba-world.js';

/** Tool approvals over the network: the real CLI asks `canUseTool`, a participant answers on the thread. */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const script: Script = [
  {
    name: 'tool',
    match: { text: 'make a file' },
    reply: [
      {
        type: 'tool_use',
        id: 'toolu_make1',
        name: 'Bash',
        input: { command: 'touch made.txt', description: 'Make a file' },
      },
    ],
  },
  {
    name: 'after',
    match: { toolResult: { name: 'Bash' } },
    reply: [{ type: 'text', text: 'Finished with the file.' }],
    times: 'always',
  },
];

const chunkOf = (e: EventEnvelope) =>
  e.data.chunk as { type: string; toolCallId?: string; toolName?: string; errorText?: string; output?: unknown };
const botPart = (world: ScubaWorld, type: string) => (e: EventEnvelope) =>
  e.principalId === world.botId && e.type === 'message_part' && chunkOf(e).type === type;
const botFinished = (world: ScubaWorld) => (all: EventEnvelope[]) =>
  all.some((e) => e.principalId === world.botId && e.type === 'run_finished');

async function setup(extra: Record<string, unknown> = {}) {
  world = await startScubaWorld({ script });
  const bob = await world.server.createHuman('bob', 'Bob');
  await world.alice.addParticipant(world.threadId, 'bob', 'member');
  const bobClient = new BubbleClient({ url: world.server.url, token: bob.token.token! });
  // alice cannot see bob yet: he accepts her invitation (protocol.md, Consent).
  await bobClient.acceptInvitation(world.threadId);
  const bot = world.startBot({ configPath: world.writeConfig(extra) });
  await world.say('make a file');
  await world.waitFor((all) => all.some(botPart(world!, 'tool-input-available')), {
    what: 'the Bash tool-input-available',
  });
  await waitForLog(
    bot,
    (l) => l.msg === 'tool call waits for approval' && l.toolCallId === 'toolu_make1',
    'the parked call',
  );
  return { world, bot, bobClient };
}

const workspaceFile = (w: ScubaWorld, name: string) => join(w.dir, 'workspaces', w.threadId, name);

describe('tool approvals over the network', () => {
  it("ignores a member under the default (the bot's owners), announces the call to its approvers, runs the tool when the owner allows", async () => {
    const { world: w, bot, bobClient } = await setup();
    const asked = await w.waitFor((all) => all.some(botPart(w, 'tool-approval-request')), {
      what: 'the approval request',
    });
    const request = asked.find(botPart(w, 'tool-approval-request'))!;
    // A call in the bot's own turn: the chunk sits in that run, after the call, and names who may answer.
    const call = asked.find(botPart(w, 'tool-input-available'))!;
    expect(request.data).toEqual({
      runId: call.data.runId,
      chunk: {
        type: 'tool-approval-request',
        approvalId: 'toolu_make1',
        toolCallId: 'toolu_make1',
        providerMetadata: { bubble: { approvers: ['alice'] } },
      },
    });
    expect(request.seq).toBeGreaterThan(call.seq);
    await bobClient.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_make1', decision: 'allow' },
    });
    await waitForLog(
      bot,
      (l) => l.msg === 'approval from a principal who may not approve; ignored' && l.by === 'bob',
      "bob's answer ignored",
    );
    expect(existsSync(workspaceFile(w, 'made.txt'))).toBe(false);

    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_make1', decision: 'allow' },
    });
    const events = await w.waitFor(botFinished(w), { what: 'the run to finish' });
    expect(events.filter(botPart(w, 'tool-output-available')).map((e) => chunkOf(e).toolCallId)).toEqual([
      'toolu_make1',
    ]);
    expect(existsSync(workspaceFile(w, 'made.txt'))).toBe(true);
    expect(events.find((e) => e.principalId === w.botId && e.type === 'run_finished')!.data.status).toBe('completed');
    bobClient.close();
  });

  it('honours updatedInput', async () => {
    const { world: w, bobClient } = await setup();
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: {
        toolCallId: 'toolu_make1',
        decision: 'allow',
        updatedInput: { command: 'touch rewritten.txt', description: 'Make another file' },
      },
    });
    await w.waitFor(botFinished(w), { what: 'the run to finish' });
    expect(existsSync(workspaceFile(w, 'rewritten.txt'))).toBe(true);
    expect(existsSync(workspaceFile(w, 'made.txt'))).toBe(false);
    bobClient.close();
  });

  it('a deny with a reason reaches Claude; the tool does not run', async () => {
    const { world: w, bobClient } = await setup();
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_make1', decision: 'deny', reason: 'not in this repo' },
    });
    const events = await w.waitFor(botFinished(w), { what: 'the run to finish' });
    // A denial ends the call as denied (not failed), with its reason.
    expect(events.some(botPart(w, 'tool-output-error'))).toBe(false);
    const denied = events.find(botPart(w, 'tool-output-denied'))!;
    expect(denied.data.chunk).toEqual({
      type: 'tool-output-denied',
      toolCallId: 'toolu_make1',
      providerMetadata: { bubble: { reason: 'Denied by alice: not in this repo' } },
    });
    expect(existsSync(workspaceFile(w, 'made.txt'))).toBe(false);
    bobClient.close();
  });

  it('"thread_owners" lets the thread owner answer and ignores a member who is no owner of the thread', async () => {
    const { world: w, bot, bobClient } = await setup({ approvals: { approvers: 'thread_owners' } });
    await bobClient.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_make1', decision: 'allow' },
    });
    await waitForLog(
      bot,
      (l) => l.msg === 'approval from a principal who may not approve; ignored' && l.by === 'bob',
      "bob's answer ignored",
    );
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_make1', decision: 'allow' },
    });
    await w.waitFor(botFinished(w), { what: 'the run to finish' });
    expect(existsSync(workspaceFile(w, 'made.txt'))).toBe(true);
    bobClient.close();
  });

  it('"participants" lets a member answer', async () => {
    const { world: w, bobClient } = await setup({ approvals: { approvers: 'participants' } });
    await bobClient.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_make1', decision: 'allow' },
    });
    await w.waitFor(botFinished(w), { what: 'the run to finish' });
    expect(existsSync(workspaceFile(w, 'made.txt'))).toBe(true);
    bobClient.close();
  });

  it('no answer in time fails closed, and the denial is on the thread', async () => {
    const { world: w, bobClient } = await setup({ approvals: { timeoutSeconds: 1 } });
    const events = await w.waitFor(botFinished(w), { what: 'the run to finish after the timeout' });
    const denial = events.find((e) => e.principalId === w.botId && e.type === 'tool_call_approval')!;
    expect(denial.data).toEqual({
      toolCallId: 'toolu_make1',
      decision: 'deny',
      reason: 'Denied: nobody allowed to approve Bash answered within 1 s.',
    });
    expect(events.find(botPart(w, 'tool-output-denied'))!.data.chunk).toMatchObject({
      providerMetadata: { bubble: { reason: 'Denied: nobody allowed to approve Bash answered within 1 s.' } },
    });
    expect(existsSync(workspaceFile(w, 'made.txt'))).toBe(false);
    bobClient.close();
  });
});

describe('questions Claude asks', () => {
  it('a participant answers AskUserQuestion with tool_call_result; Claude gets the answer', async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'ask',
          match: { text: 'pick a color' },
          reply: [
            {
              type: 'tool_use',
              id: 'toolu_ask1',
              name: 'AskUserQuestion',
              input: {
                questions: [
                  {
                    question: 'Which color?',
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
        {
          name: 'answered',
          match: { toolResult: { name: 'AskUserQuestion' } },
          reply: [{ type: 'text', text: 'Blue it is.' }],
        },
      ],
    });
    const w = world;
    const bot = w.startBot({
      configPath: w.writeConfig({
        claude: { workspaceRoot: './workspaces', configDir: './claude-home', tools: ['Bash', 'AskUserQuestion'] },
      }),
    });
    await w.say('pick a color');
    await waitForLog(
      bot,
      (l) => l.msg === 'tool call waits for approval' && l.toolCallId === 'toolu_ask1',
      'the parked question',
    );
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_result',
      data: { toolCallId: 'toolu_ask1', output: 'Blue' },
    });
    const events = await w.waitFor(botFinished(w), { what: 'the run to finish' });
    const output = events.find(botPart(w, 'tool-output-available'))!;
    expect(chunkOf(output).output).toBe(
      'Your questions have been answered: "Which color?"="Blue". You can now continue with these answers in mind.',
    );
    const followUp = w.double.requests.find((r) => r.rule?.name === 'answered')!;
    expect(JSON.stringify(followUp.body)).toContain('Which color?');
  });
});
