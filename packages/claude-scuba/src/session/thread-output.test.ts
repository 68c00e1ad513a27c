import { readFileSync } from 'node:fs';
import { narrowSdkMessage } from '@bubble/engine';
import { describe, expect, it } from 'vitest';
import { isScubaError } from '../errors.js';
import type { BubbleEventDraft } from '../translate/bubble-draft.js';
import { subagentKey, SubagentRegistry } from './subagent-registry.js';
import { ThreadOutput, type ThreadOutputStep } from './thread-output.js';

const P = 'th_p';
const engineFixture = (name: string) =>
  readFileSync(new URL(`../../../engine/src/__fixtures__/${name}.jsonl`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** `thread: what`, compact: run events by type and status, chunks by type (and tool name or delta). */
function describeEvent(threadId: string, e: BubbleEventDraft): string {
  const where = threadId === P ? 'parent' : threadId.replace(`${P}.`, '');
  if (e.type === 'run_started') return `${where}: run_started ${e.data.runId}`;
  if (e.type === 'run_finished') return `${where}: run_finished ${e.data.runId} ${e.data.status}`;
  const c = e.data.chunk as {
    type: string;
    toolName?: string;
    delta?: string;
    providerMetadata?: { bubble?: { childThreadId?: string } };
  };
  const child = c.providerMetadata?.bubble?.childThreadId;
  return `${where}: ${c.type}${c.toolName ? ` ${c.toolName}` : ''}${c.delta !== undefined ? ` "${c.delta}"` : ''}${child ? ` -> ${child.replace(`${P}.`, '')}` : ''}`;
}

/** Drives a ThreadOutput like the session: a run per queued push, subthreads created at once. */
function drive(lines: Array<Record<string, unknown>>, attach = true) {
  const output = new ThreadOutput({ threadId: P, newRunId: () => 'run-u1', now: () => new Date(0) });
  const log: string[] = [];
  let children = 0;
  let runs = 0;
  const take = (step: Pick<ThreadOutputStep, 'deliveries' | 'open'>) => {
    for (const d of step.deliveries) for (const e of d.events) log.push(describeEvent(d.threadId, e));
    for (const request of step.open) {
      take(
        attach
          ? output.attached(request.toolCallId, `${request.parentThreadId}.sub-child-00${children++}`)
          : output.failedToAttach(request.toolCallId),
      );
    }
  };
  for (const line of lines) {
    if (line.type === 'command_lifecycle' && line.state === 'queued') {
      take({
        deliveries: [output.beginRun({ runId: `run-${++runs}`, userMessageUuid: String(line.command_uuid) })],
        open: [],
      });
    }
    take(output.push(narrowSdkMessage(line)));
  }
  return { output, log };
}

describe('ThreadOutput with recorded sub-agent streams', () => {
  it('foreground: the sub-agent works on its subthread, its run ends before the parent gets the Agent result', () => {
    const { log, output } = drive(engineFixture('subagent-foreground'));
    expect(log).toEqual([
      'parent: run_started run-1',
      'parent: tool-input-available Agent -> sub-child-000',
      'sub-child-000: run_started sub-toolu_01noLuwJC8XiT1vJBfzAaKF3',
      'sub-child-000: tool-input-available Bash',
      'sub-child-000: tool-output-available',
      'sub-child-000: run_finished sub-toolu_01noLuwJC8XiT1vJBfzAaKF3 completed',
      'parent: tool-output-available',
      'parent: text-start',
      'parent: text-delta "The "',
      'parent: text-delta "helper "',
      'parent: text-delta "reported "',
      'parent: text-delta "back."',
      'parent: text-end',
      'parent: run_finished run-1 completed',
    ]);
    expect(output.activeSubagents).toEqual([]);
    expect(output.isIdle).toBe(true);
  });

  it('background: the parent run ends at once; the child run ends at the task notification; the unsolicited turn gets its own run', () => {
    const { log, output } = drive(engineFixture('subagent-background'));
    expect(log).toEqual([
      'parent: run_started run-1',
      'parent: tool-input-available Agent -> sub-child-000',
      'sub-child-000: run_started sub-toolu_01RcYMPqYm1BfbYbQFPJ9in5',
      'parent: tool-output-available',
      'parent: text-start',
      'parent: text-delta "Launched "',
      'parent: text-delta "in "',
      'parent: text-delta "the "',
      'parent: text-delta "background."',
      'parent: text-end',
      'parent: run_finished run-1 completed',
      'sub-child-000: tool-input-available Bash',
      'sub-child-000: tool-output-available',
      'sub-child-000: text-start',
      'sub-child-000: text-delta "Sub-agent report: all good."',
      'sub-child-000: text-end',
      'sub-child-000: run_finished sub-toolu_01RcYMPqYm1BfbYbQFPJ9in5 completed',
      'parent: run_started run-u1',
      'parent: text-start',
      'parent: text-delta "The "',
      'parent: text-delta "background "',
      'parent: text-delta "helper "',
      'parent: text-delta "finished."',
      'parent: text-end',
      'parent: run_finished run-u1 completed',
    ]);
    expect(output.activeSubagents).toEqual([]);
  });

  it('when the subthread cannot be created, the parent still shows the Agent call and the sub-agent output is dropped', () => {
    const { log } = drive(engineFixture('subagent-foreground'), false);
    expect(log.filter((line) => !line.startsWith('parent: text'))).toEqual([
      'parent: run_started run-1',
      'parent: tool-input-available Agent',
      'parent: tool-output-available',
      'parent: run_finished run-1 completed',
    ]);
  });
});

const assistant = (ptu: string | null, block: Record<string, unknown>) =>
  narrowSdkMessage({ type: 'assistant', message: { content: [block] }, parent_tool_use_id: ptu, session_id: 's' });

describe('SubagentRegistry', () => {
  it('derives a stable key per thread, run and tool call', () => {
    const a = subagentKey({ threadId: 't', runId: 'r', toolCallId: 'x' });
    expect(subagentKey({ threadId: 't', runId: 'r', toolCallId: 'x' })).toBe(a);
    expect(subagentKey({ threadId: 't', runId: 'r2', toolCallId: 'x' })).not.toBe(a);
    expect(a).toMatch(/^subagent-[A-Za-z0-9_-]{43}$/);
  });

  it('keeps what arrives before the subthread exists and delivers it, close included, on attach', () => {
    const registry = new SubagentRegistry({ now: () => new Date(0) });
    const request = registry.open({
      parentThreadId: P,
      parentRunId: 'r1',
      toolCallId: 'T',
      toolName: 'Agent',
      input: { description: 'Look around' },
    });
    expect(request).toMatchObject({ toolCallId: 'T', parentThreadId: P, title: 'Look around' });
    expect(registry.route('T', assistant('T', { type: 'text', text: 'early' })).deliveries).toEqual([]);
    registry.taskNotification('T', 'completed');
    const step = registry.attach('T', `${P}.sub-x`);
    expect(step.deliveries.flatMap((d) => d.events.map((e) => describeEvent(d.threadId, e)))).toEqual([
      'parent: tool-input-available Agent -> sub-x',
      'sub-x: run_started sub-T',
      'sub-x: text-start',
      'sub-x: text-delta "early"',
      'sub-x: text-end',
      'sub-x: run_finished sub-T completed',
    ]);
    expect(registry.active).toEqual([]);
    expect(registry.route('T', assistant('T', { type: 'text', text: 'late' })).dropped).toBe(1);
  });

  it('opens nested sub-agents on the child thread', () => {
    const registry = new SubagentRegistry({ now: () => new Date(0) });
    registry.open({ parentThreadId: P, parentRunId: 'r1', toolCallId: 'T', toolName: 'Agent', input: {} });
    registry.attach('T', `${P}.sub-x`);
    const step = registry.route(
      'T',
      assistant('T', { type: 'tool_use', id: 'T2', name: 'Agent', input: { description: 'deeper' } }),
    );
    expect(step.open).toEqual([
      { toolCallId: 'T2', parentThreadId: `${P}.sub-x`, key: expect.stringMatching(/^subagent-/), title: 'deeper' },
    ]);
    const attached = registry.attach('T2', `${P}.sub-x.sub-y`);
    expect(attached.deliveries.map((d) => d.threadId)).toEqual([`${P}.sub-x`, `${P}.sub-x.sub-y`]);
    expect(attached.deliveries[0]!.events[0]!.data.runId).toBe('sub-T');
  });

  it('maps a failed or stopped task to the child run status', () => {
    const registry = new SubagentRegistry({ now: () => new Date(0) });
    for (const [id, status] of [
      ['A', 'failed'],
      ['B', 'stopped'],
    ] as const) {
      registry.open({ parentThreadId: P, parentRunId: 'r1', toolCallId: id, toolName: 'Agent', input: {} });
      registry.attach(id, `${P}.sub-${id}`);
      const finished = registry.taskNotification(id, status).deliveries[0]!.events.at(-1)!;
      expect(finished.data).toMatchObject(
        status === 'failed'
          ? { status: 'error', error: { code: 'subagent_failed', message: 'the sub-agent ended with status failed' } }
          : { status: 'interrupted' },
      );
    }
  });

  it('refuses to open the same tool call twice', () => {
    const registry = new SubagentRegistry({ now: () => new Date(0) });
    registry.open({ parentThreadId: P, parentRunId: 'r1', toolCallId: 'T', toolName: 'Agent', input: {} });
    let code: string | undefined;
    try {
      registry.open({ parentThreadId: P, parentRunId: 'r1', toolCallId: 'T', toolName: 'Agent', input: {} });
    } catch (error) {
      if (isScubaError(error)) code = error.code;
    }
    expect(code).toBe('subagent_duplicate');
  });
});

describe('ThreadOutput.closeAll', () => {
  it('closes the open main run and every open child run when the query dies', () => {
    const output = new ThreadOutput({ threadId: P, newRunId: () => 'u', now: () => new Date(0) });
    output.beginRun({ runId: 'r1' });
    const opened = output.push(assistant(null, { type: 'tool_use', id: 'T', name: 'Agent', input: {} }));
    output.attached(opened.open[0]!.toolCallId, `${P}.sub-x`);
    const step = output.closeAll({
      status: 'error',
      error: { code: 'cli_exit', message: 'the Claude process stopped' },
    });
    expect(step.deliveries.flatMap((d) => d.events.map((e) => describeEvent(d.threadId, e)))).toEqual([
      'sub-x: error',
      'sub-x: run_finished sub-T error',
      'parent: error',
      'parent: run_finished r1 error',
    ]);
    expect(output.isIdle).toBe(true);
    expect(output.activeSubagents).toEqual([]);
  });
});
