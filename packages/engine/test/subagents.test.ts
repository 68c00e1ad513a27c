import { describe, expect, it } from 'vitest';
import type { Script } from '@bubble/model-double';
import { blocksOf, harnessFor, textOf } from './harness.js';

const agentScript = (background: boolean): Script => [
  {
    name: 'main-delegates',
    match: { text: 'delegate this', subagent: false },
    reply: [
      {
        type: 'tool_use',
        name: 'Agent',
        input: {
          description: 'Check things',
          prompt: 'Please check the things',
          subagent_type: 'general-purpose',
          run_in_background: background,
        },
      },
    ],
  },
  // In the background case the sub-agent answers late, so the main turn has ended first.
  {
    name: 'sub-runs-bash',
    match: { subagent: true, text: 'Please check the things' },
    delayMs: background ? 400 : 0,
    reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo sub-agent-was-here', description: 'echo' } }],
  },
  {
    name: 'sub-reports',
    match: { subagent: true, toolResult: { name: 'Bash' } },
    reply: [{ type: 'text', text: 'Sub-agent report: all good.' }],
  },
  {
    name: 'main-after-agent',
    match: { subagent: false, toolResult: { name: 'Agent' } },
    reply: [{ type: 'text', text: background ? 'Launched in the background.' : 'The helper reported back.' }],
  },
  {
    name: 'main-on-notification',
    match: { subagent: false },
    reply: [{ type: 'text', text: 'The background helper finished.' }],
  },
];

const options = { tools: ['Bash', 'Agent'] };

describe.concurrent('sub-agents (real CLI against the model double)', () => {
  it('runs a foreground sub-agent: task_* messages, its messages carry parent_tool_use_id, one result', async (ctx) => {
    const h = await harnessFor(ctx, agentScript(false));
    const s = h.start(options);
    s.live.push('delegate this');
    const result = await s.result();
    expect(result.result).toBe('The helper reported back.');
    const agentUse = s
      .of('assistant')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_use' && b.name === 'Agent')!;
    const agentId = agentUse.id as string;
    expect(s.of('system', 'task_started')[0]).toMatchObject({ tool_use_id: agentId, is_backgrounded: false });
    expect(s.of('system', 'task_notification')[0]).toMatchObject({ tool_use_id: agentId, status: 'completed' });
    const subMessages = s.messages.filter((m) => m.parent_tool_use_id === agentId);
    expect(subMessages.map(textOf)).toContain('Please check the things');
    expect(subMessages.flatMap(blocksOf).some((b) => b.type === 'tool_use' && b.name === 'Bash')).toBe(true);
    expect(subMessages.flatMap(blocksOf).find((b) => b.type === 'tool_result')).toMatchObject({
      content: 'sub-agent-was-here',
    });
    // stream_event is never emitted for sub-agents.
    expect(s.of('stream_event').filter((m) => m.parent_tool_use_id === agentId)).toEqual([]);
    const agentResult = s
      .of('user')
      .filter((m) => (m.parent_tool_use_id ?? null) === null)
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_result' && b.tool_use_id === agentId);
    expect(JSON.stringify(agentResult)).toContain('Sub-agent report: all good.');
    expect(s.of('result')).toHaveLength(1);
    expect(h.double.requests.filter((r) => r.subagent).map((r) => r.rule?.name)).toEqual([
      'sub-runs-bash',
      'sub-reports',
    ]);
    await s.record('subagent-foreground');
  });

  it('runs a background sub-agent: result #1 first, its messages after, then an unsolicited turn with result #2', async (ctx) => {
    const h = await harnessFor(ctx, agentScript(true));
    const s = h.start(options);
    const uuid = s.live.push('delegate this');
    const r1 = await s.result(1);
    expect(r1.result).toBe('Launched in the background.');
    expect(r1.user_message_uuids).toEqual([uuid]);
    const agentUse = s
      .of('assistant')
      .flatMap(blocksOf)
      .find((b) => b.type === 'tool_use' && b.name === 'Agent')!;
    const agentId = agentUse.id as string;
    const r2 = await s.result(2);
    expect(r2.result).toBe('The background helper finished.');
    const i = (m: unknown) => s.messages.indexOf(m as never);
    const subText = s.messages.find(
      (m) => m.parent_tool_use_id === agentId && m.type === 'assistant' && textOf(m) === 'Sub-agent report: all good.',
    );
    expect(subText).toBeDefined();
    expect(i(subText)).toBeGreaterThan(i(r1));
    expect(s.of('system', 'task_started')[0]).toMatchObject({ tool_use_id: agentId, is_backgrounded: true });
    const notification = s.of('system', 'task_notification')[0]!;
    expect(notification).toMatchObject({ tool_use_id: agentId, status: 'completed' });
    expect(i(notification)).toBeGreaterThan(i(r1));
    expect(i(notification)).toBeLessThan(i(r2));
    expect(s.of('system', 'background_tasks_changed').at(-1)).toMatchObject({ tasks: [] });
    expect(s.of('system', 'init')).toHaveLength(2);
    // The unsolicited turn answers no pushed message.
    expect(r2.user_message_uuids ?? []).toEqual([]);
    const notificationRequest = h.double.requests.find((r) => r.rule?.name === 'main-on-notification')!;
    expect(JSON.stringify(notificationRequest.body)).toContain('task-notification');
    await s.record('subagent-background');
  });
});
