import type { Role } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { isScubaError } from '../errors.js';
import { FakeClock } from '../testing/fake-clock.js';
import {
  ApprovalRegistry,
  approversOnThread,
  isAllowedApprover,
  noApproverMessage,
  type ApprovalDecision,
  type ApproverPolicy,
  type ParkedCall,
} from './approval-registry.js';

const roles = new Map<string, Role>([
  ['alice', 'owner'],
  ['bob', 'member'],
  ['bot-research', 'owner'],
]);

const botOwners = new Set(['bob', 'dave']);
const context = { selfId: 'bot-research', roles, botOwners };

describe('isAllowedApprover', () => {
  it.each<[ApproverPolicy, string, boolean]>([
    // the default: the bot's own owners, while they are on the thread (dave owns the bot but is not here)
    ['bot_owners', 'bob', true],
    ['bot_owners', 'dave', false],
    ['bot_owners', 'alice', false],
    ['bot_owners', 'bot-research', false],
    ['thread_owners', 'alice', true],
    ['thread_owners', 'bob', false],
    ['thread_owners', 'mallory', false],
    ['thread_owners', 'bot-research', false],
    ['participants', 'alice', true],
    ['participants', 'bob', true],
    ['participants', 'mallory', false],
    ['participants', 'bot-research', false],
    [['bob', 'carol'], 'bob', true],
    [['bob', 'carol'], 'carol', false],
    [['bob', 'carol'], 'alice', false],
    [['bot-research'], 'bot-research', false],
  ])('%j: %s -> %s', (policy, principalId, allowed) => {
    expect(isAllowedApprover(policy, principalId, context)).toBe(allowed);
  });

  it('a thread owner is no approver of a bot she does not own (the Mallory case)', () => {
    const mallorys = new Map<string, Role>([
      ['mallory', 'owner'],
      ['bot-research', 'member'],
    ]);
    expect(isAllowedApprover('bot_owners', 'mallory', { ...context, roles: mallorys })).toBe(false);
    expect(approversOnThread('bot_owners', { ...context, roles: mallorys })).toEqual([]);
  });
});

describe('approversOnThread and noApproverMessage', () => {
  it.each<[ApproverPolicy, string[]]>([
    ['bot_owners', ['bob']],
    ['thread_owners', ['alice']],
    ['participants', ['alice', 'bob']],
    [['carol', 'bob'], ['bob']],
  ])('%j -> %j', (policy, expected) => {
    expect(approversOnThread(policy, context)).toEqual(expected);
  });

  const nameOf = (id: string) => ({ bob: 'Bob', dave: 'Dave' })[id] ?? id;
  it.each<[ApproverPolicy, ReadonlySet<string>, string]>([
    [
      'bot_owners',
      new Set(['bob', 'dave']),
      'Denied at once: Bash needs an approval, but only an owner of this bot may approve its tools: Bob (bob) or Dave (dave), and none of them is on this thread; ask one of them to join it.',
    ],
    [
      'bot_owners',
      new Set(['dave']),
      'Denied at once: Bash needs an approval, but only an owner of this bot may approve its tools: Dave (dave), and none of them is on this thread; ask one of them to join it.',
    ],
    [
      'bot_owners',
      new Set(),
      'Denied at once: Bash needs an approval, but this bot has no owners, so nobody can approve its tools.',
    ],
    [
      'thread_owners',
      new Set(),
      'Denied at once: Bash needs an approval, but only an owner of this thread may approve tools, and none is on it.',
    ],
    [
      'participants',
      new Set(),
      'Denied at once: Bash needs an approval, but nobody else is on this thread to approve it.',
    ],
    [
      ['carol'],
      new Set(),
      'Denied at once: Bash needs an approval, but only carol may approve tools here, and none of them is on this thread; ask one of them to join it.',
    ],
  ])('%j', (policy, owners, message) => {
    expect(
      noApproverMessage('Bash', policy, { selfId: 'bot-research', roles: new Map(), botOwners: owners, nameOf }),
    ).toBe(message);
  });
});

function setup(timeoutMs = 600_000) {
  const clock = new FakeClock();
  const settled: Array<[string, ApprovalDecision]> = [];
  const registry = new ApprovalRegistry({
    clock,
    timeoutMs,
    isApprover: (p) => isAllowedApprover('thread_owners', p, context),
    onSettled: (call: ParkedCall, decision) => settled.push([call.toolCallId, decision]),
  });
  return { clock, registry, settled };
}

const request = (toolCallId = 'toolu_1', signal?: AbortSignal) => ({
  toolCallId,
  toolName: 'Bash',
  input: { command: 'touch probe.txt' },
  ...(signal ? { signal } : {}),
});
const approval = (principalId: string, data: Record<string, unknown>) => ({
  type: 'tool_call_approval',
  principalId,
  data: { toolCallId: 'toolu_1', ...data },
});

/** Whether a promise has settled yet, without waiting for it. */
async function peek<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe('ApprovalRegistry', () => {
  it('cancels one parked call as interrupted, leaving the others parked', async () => {
    const { registry, settled } = setup();
    const first = registry.park(request('toolu_1'));
    const second = registry.park(request('toolu_2'));
    expect(registry.cancel('toolu_1')).toBe(true);
    expect(await first).toMatchObject({ behavior: 'deny', source: 'interrupt', by: null });
    expect(await peek(second)).toBe('pending');
    expect(registry.cancel('toolu_1')).toBe(false);
    expect(settled.map(([id]) => id)).toEqual(['toolu_1']);
  });

  it('parks a call until an owner allows it', async () => {
    const { registry } = setup();
    const decision = registry.park(request());
    expect(await peek(decision)).toBe('pending');
    expect(registry.pending.map((c) => c.toolCallId)).toEqual(['toolu_1']);
    expect(registry.observe(approval('alice', { decision: 'allow' }))).toMatchObject({
      kind: 'resolved',
      toolCallId: 'toolu_1',
    });
    expect(await decision).toEqual({ behavior: 'allow', by: 'alice', source: 'approval' });
    expect(registry.size).toBe(0);
  });

  it('honours updatedInput', async () => {
    const { registry } = setup();
    const decision = registry.park(request());
    registry.observe(approval('alice', { decision: 'allow', updatedInput: { command: 'touch safe.txt' } }));
    expect(await decision).toEqual({
      behavior: 'allow',
      by: 'alice',
      source: 'approval',
      updatedInput: { command: 'touch safe.txt' },
    });
  });

  it.each([
    [{ decision: 'deny', reason: 'not in this repo' }, 'Denied by alice: not in this repo'],
    [{ decision: 'deny' }, 'Denied by alice.'],
    [{ decision: 'deny', reason: '  ' }, 'Denied by alice.'],
  ])('denies with the reason given: %j', async (data, message) => {
    const { registry } = setup();
    const decision = registry.park(request());
    registry.observe(approval('alice', data));
    expect(await decision).toEqual({ behavior: 'deny', by: 'alice', source: 'approval', message });
  });

  it('takes a tool_call_result from an approver in place of running the tool', async () => {
    const { registry } = setup();
    const ok = registry.park(request('toolu_1'));
    const failed = registry.park(request('toolu_2'));
    registry.observe({
      type: 'tool_call_result',
      principalId: 'alice',
      data: { toolCallId: 'toolu_1', output: { files: 3 } },
    });
    registry.observe({
      type: 'tool_call_result',
      principalId: 'alice',
      data: { toolCallId: 'toolu_2', output: 'disk full', isError: true },
    });
    expect(await ok).toEqual({
      behavior: 'deny',
      by: 'alice',
      source: 'result',
      message: 'The tool was not run: alice supplied its result instead:\n{"files":3}',
      result: { output: { files: 3 }, isError: false },
    });
    expect(await failed).toMatchObject({
      source: 'result',
      message: 'The tool was not run: alice answered in its place with an error:\ndisk full',
    });
  });

  it('ignores answers from principals who are not allowed, and keeps the call parked', async () => {
    const { registry } = setup();
    const decision = registry.park(request());
    expect(registry.observe(approval('bob', { decision: 'allow' }))).toEqual({
      kind: 'not_allowed',
      toolCallId: 'toolu_1',
      principalId: 'bob',
    });
    expect(registry.observe(approval('bot-research', { decision: 'allow' }))).toEqual({
      kind: 'not_allowed',
      toolCallId: 'toolu_1',
      principalId: 'bot-research',
    });
    expect(await peek(decision)).toBe('pending');
    registry.observe(approval('alice', { decision: 'deny' }));
    expect(await decision).toMatchObject({ behavior: 'deny', by: 'alice' });
  });

  it.each([
    [{ type: 'message_part', principalId: 'alice', data: {} }, { kind: 'not_an_answer' }],
    [
      approval('alice', { decision: 'maybe' }),
      { kind: 'invalid', reason: 'tool_call_approval data does not match its schema' },
    ],
    [
      { type: 'tool_call_result', principalId: 'alice', data: { output: 1 } },
      { kind: 'invalid', reason: 'tool_call_result data does not match its schema' },
    ],
    [
      { type: 'tool_call_approval', principalId: 'alice', data: { toolCallId: 'toolu_other', decision: 'allow' } },
      { kind: 'unknown_call', toolCallId: 'toolu_other', kept: true },
    ],
  ])('reports what it did not act on: %j', async (event, expected) => {
    const { registry } = setup();
    const decision = registry.park(request());
    expect(registry.observe(event)).toEqual(expected);
    expect(await peek(decision)).toBe('pending');
  });

  it('a second answer to a settled call is an unknown call (nothing is resolved twice)', async () => {
    const { registry, settled } = setup();
    const decision = registry.park(request());
    registry.observe(approval('alice', { decision: 'allow' }));
    expect(registry.observe(approval('alice', { decision: 'deny' }))).toEqual({
      kind: 'unknown_call',
      toolCallId: 'toolu_1',
    });
    expect(await decision).toMatchObject({ behavior: 'allow' });
    expect(settled).toHaveLength(1);
  });

  it('fails closed when nobody answers in time, and tells its owner', async () => {
    const { registry, clock, settled } = setup(600_000);
    const decision = registry.park(request());
    clock.advance(599_999);
    expect(await peek(decision)).toBe('pending');
    clock.advance(1);
    const expected = {
      behavior: 'deny',
      by: null,
      source: 'timeout',
      message: 'Denied: nobody allowed to approve Bash answered within 600 s.',
    };
    expect(await decision).toEqual(expected);
    expect(settled).toEqual([['toolu_1', expected]]);
    expect(registry.observe(approval('alice', { decision: 'allow' }))).toEqual({
      kind: 'unknown_call',
      toolCallId: 'toolu_1',
    });
  });

  it('an answer stops the timeout', async () => {
    const { registry, clock, settled } = setup(1_000);
    const decision = registry.park(request());
    registry.observe(approval('alice', { decision: 'allow' }));
    clock.advance(5_000);
    expect(await decision).toMatchObject({ behavior: 'allow' });
    expect(settled).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('an interrupt cancels every parked call', async () => {
    const { registry, settled } = setup();
    const one = registry.park(request('toolu_1'));
    const two = registry.park(request('toolu_2'));
    expect(registry.cancelAll('interrupt').map((c) => c.toolCallId)).toEqual(['toolu_1', 'toolu_2']);
    expect(await one).toMatchObject({ behavior: 'deny', source: 'interrupt', by: null });
    expect(await two).toMatchObject({ behavior: 'deny', source: 'interrupt' });
    expect(settled.map(([id, d]) => `${id}:${d.source}`)).toEqual(['toolu_1:interrupt', 'toolu_2:interrupt']);
    expect(registry.size).toBe(0);
  });

  it('the SDK aborting the call (its signal) cancels it', async () => {
    const { registry } = setup();
    const controller = new AbortController();
    const decision = registry.park(request('toolu_1', controller.signal));
    controller.abort();
    expect(await decision).toMatchObject({ behavior: 'deny', source: 'interrupt' });
    const aborted = new AbortController();
    aborted.abort();
    expect(await registry.park(request('toolu_2', aborted.signal))).toMatchObject({ source: 'interrupt' });
    expect(registry.size).toBe(0);
  });

  it('an answer that arrives before the call is parked settles it when it is parked', async () => {
    const { registry, clock } = setup();
    expect(registry.observe(approval('alice', { decision: 'allow', updatedInput: { command: 'ls' } }))).toEqual({
      kind: 'unknown_call',
      toolCallId: 'toolu_1',
      kept: true,
    });
    clock.advance(1_000);
    expect(await registry.park(request())).toEqual({
      behavior: 'allow',
      by: 'alice',
      source: 'approval',
      updatedInput: { command: 'ls' },
    });
    expect(registry.size).toBe(0);
  });

  it("an early answer from someone who may not approve is kept but not honoured; an approver's later answer wins", async () => {
    const { registry } = setup();
    registry.observe(approval('bob', { decision: 'allow' }));
    const decision = registry.park(request());
    expect(await peek(decision)).toBe('pending');
    registry.observe(approval('alice', { decision: 'deny', reason: 'no' }));
    expect(await decision).toMatchObject({ behavior: 'deny', by: 'alice' });
  });

  it('an early answer older than the approval timeout is forgotten', async () => {
    const { registry, clock } = setup(1_000);
    registry.observe(approval('alice', { decision: 'allow' }));
    clock.advance(1_001);
    const decision = registry.park(request());
    expect(await peek(decision)).toBe('pending');
  });

  it('refuses to park the same toolCallId twice', () => {
    const { registry } = setup();
    void registry.park(request());
    let code: string | undefined;
    try {
      void registry.park(request());
    } catch (error) {
      if (isScubaError(error)) code = error.code;
    }
    expect(code).toBe('approval_duplicate');
  });

  it('reads roles when an answer arrives, so a promotion counts', async () => {
    const live = new Map<string, Role>([['bob', 'member']]);
    const registry = new ApprovalRegistry({
      clock: new FakeClock(),
      timeoutMs: 1_000,
      isApprover: (p) => isAllowedApprover('thread_owners', p, { selfId: 'bot', roles: live, botOwners: new Set() }),
    });
    const decision = registry.park(request());
    expect(registry.observe(approval('bob', { decision: 'allow' })).kind).toBe('not_allowed');
    live.set('bob', 'owner');
    expect(registry.observe(approval('bob', { decision: 'allow' })).kind).toBe('resolved');
    expect(await decision).toMatchObject({ behavior: 'allow', by: 'bob' });
  });
});
