import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import {
  BacklogPolicySchema,
  DEFAULT_BACKLOG_POLICY,
  selectReplayWindow,
  type BacklogPolicyInput,
  type ReplayWindowDecision,
} from './replay-window.js';

/**
 * A thread log described compactly: `n` filler events (a custom type, not part of any run),
 * with runs placed at given seqs. Each run is [principal, runId, startedSeq | null, partSeqs, finishedSeq | null].
 */
type RunPlan = [string, string, number | null, number[], number | null];

function threadLog(headSeq: number, runs: RunPlan[] = []): EventEnvelope[] {
  const bySeq = new Map<number, { type: string; principalId: string; data: Record<string, unknown> }>();
  for (const [principalId, runId, startedSeq, parts, finishedSeq] of runs) {
    if (startedSeq !== null) bySeq.set(startedSeq, { type: 'run_started', principalId, data: { runId } });
    for (const seq of parts)
      bySeq.set(seq, {
        type: 'message_part',
        principalId,
        data: { runId, chunk: { type: 'text-delta', id: 't', delta: `${seq}` } },
      });
    if (finishedSeq !== null)
      bySeq.set(finishedSeq, { type: 'run_finished', principalId, data: { runId, status: 'completed' } });
  }
  const events: EventEnvelope[] = [];
  for (let seq = 1; seq <= headSeq; seq += 1) {
    const planned = bySeq.get(seq) ?? { type: 'test.filler', principalId: 'alice', data: { n: seq } };
    events.push({
      id: `ev_${seq}`,
      threadId: 'th_t',
      seq,
      ...planned,
      clientEventId: null,
      createdAt: '2026-11-29T10:00:00Z',
    });
  }
  return events;
}

/** Runs the caller's loop against an in-memory log, the way the bot runtime does over HTTP. */
function resolve(
  log: EventEnvelope[],
  input: { checkpoint: number | null; joinedSeq: number; policy?: BacklogPolicyInput },
): { decision: Extract<ReplayWindowDecision, { kind: 'start' }>; reads: number; eventsRead: number } {
  const policy = BacklogPolicySchema.parse(input.policy ?? {});
  const headSeq = log.length;
  let events: EventEnvelope[] = [];
  let reads = 0;
  for (;;) {
    const decision = selectReplayWindow({
      checkpoint: input.checkpoint,
      joinedSeq: input.joinedSeq,
      headSeq,
      policy,
      events,
    });
    if (decision.kind === 'start') return { decision, reads, eventsRead: events.length };
    reads += 1;
    if (reads > 50) throw new Error('selectReplayWindow kept asking for events');
    expect(decision.limit).toBeGreaterThan(0);
    expect(decision.limit).toBeLessThanOrEqual(1000);
    const page = log.filter((event) => event.seq < decision.beforeSeq).slice(-decision.limit);
    events = [...page, ...events];
  }
}

const cases: Array<{
  name: string;
  headSeq: number;
  runs?: RunPlan[];
  checkpoint: number | null;
  joinedSeq: number;
  policy?: BacklogPolicyInput;
  afterSeq: number;
  rule: string;
  maxReads?: number;
}> = [
  {
    name: 'first join, since_joined, short thread: everything since the join',
    headSeq: 10,
    checkpoint: null,
    joinedSeq: 4,
    afterSeq: 3,
    rule: 'since_joined',
  },
  {
    name: 'first join, since_joined, long thread: the newest maxReplay events',
    headSeq: 500,
    checkpoint: null,
    joinedSeq: 2,
    afterSeq: 450,
    rule: 'since_joined',
  },
  {
    name: 'first join, skip_to_head reads nothing old',
    headSeq: 500,
    checkpoint: null,
    joinedSeq: 2,
    policy: { onFirstJoin: 'skip_to_head' },
    afterSeq: 500,
    rule: 'skip_to_head',
    maxReads: 0,
  },
  {
    name: 'resume, catch_up, few events since the checkpoint: right after it, no reads',
    headSeq: 30,
    checkpoint: 12,
    joinedSeq: 2,
    afterSeq: 12,
    rule: 'catch_up',
    maxReads: 0,
  },
  {
    name: 'resume, catch_up, many events since: the newest maxReplay',
    headSeq: 300,
    checkpoint: 12,
    joinedSeq: 2,
    afterSeq: 250,
    rule: 'catch_up',
  },
  {
    name: 'resume, skip_to_head',
    headSeq: 300,
    checkpoint: 12,
    joinedSeq: 2,
    policy: { onResume: 'skip_to_head' },
    afterSeq: 300,
    rule: 'skip_to_head',
    maxReads: 0,
  },
  {
    name: 'resume at the head: nothing to replay',
    headSeq: 40,
    checkpoint: 40,
    joinedSeq: 2,
    afterSeq: 40,
    rule: 'catch_up',
    maxReads: 0,
  },
  {
    name: 'a checkpoint above the head (the log was lost) counts as no checkpoint',
    headSeq: 20,
    checkpoint: 900,
    joinedSeq: 5,
    afterSeq: 4,
    rule: 'since_joined',
  },
  {
    name: 'maxReplay is honoured',
    headSeq: 100,
    checkpoint: 0,
    joinedSeq: 1,
    policy: { maxReplay: 10 },
    afterSeq: 90,
    rule: 'catch_up',
  },
  {
    name: 'a run across the window start pulls the start back to its run_started',
    headSeq: 100,
    runs: [['alice', 'a', 45, [46, 47, 52], 55]],
    checkpoint: 5,
    joinedSeq: 2,
    afterSeq: 44,
    rule: 'catch_up',
  },
  {
    name: 'a run that finished before the window start does not move it',
    headSeq: 100,
    runs: [['alice', 'a', 40, [41], 50]],
    checkpoint: 5,
    joinedSeq: 2,
    afterSeq: 50,
    rule: 'catch_up',
  },
  {
    name: 'a run still open at the window start with no event in the window yet is included',
    headSeq: 100,
    runs: [['alice', 'a', 48, [49], null]],
    checkpoint: 5,
    joinedSeq: 2,
    afterSeq: 47,
    rule: 'catch_up',
  },
  {
    name: 'chained runs: expanding for one splits another, which is expanded too',
    headSeq: 100,
    runs: [
      ['alice', 'a', 45, [51], 60],
      ['bob', 'b', 30, [46], 47],
    ],
    checkpoint: 5,
    joinedSeq: 2,
    afterSeq: 29,
    rule: 'catch_up',
  },
  {
    name: 'catch_up never expands below the checkpoint',
    headSeq: 60,
    runs: [['alice', 'a', 3, [6, 30], 40]],
    checkpoint: 5,
    joinedSeq: 2,
    policy: { maxReplay: 50 },
    afterSeq: 5,
    rule: 'catch_up',
  },
  {
    name: 'since_joined may expand below the join to keep a run whole',
    headSeq: 100,
    runs: [['alice', 'a', 55, [58, 62], 65]],
    checkpoint: null,
    joinedSeq: 60,
    afterSeq: 54,
    rule: 'since_joined',
  },
  {
    name: 'a run started long before the first page is found by reading further back',
    headSeq: 1000,
    runs: [['alice', 'a', 700, [800, 960], 980]],
    checkpoint: null,
    joinedSeq: 1,
    afterSeq: 699,
    rule: 'since_joined',
  },
  {
    name: 'expansion is bounded by maxExpansion: a longer run is split at the earliest part within reach',
    headSeq: 1000,
    runs: [['alice', 'a', 700, [800, 900, 960], 980]],
    checkpoint: null,
    joinedSeq: 1,
    policy: { maxExpansion: 100 },
    afterSeq: 899,
    rule: 'since_joined',
  },
  {
    name: 'a bare-delta turn across the start is included from its first part',
    headSeq: 100,
    runs: [['alice', 'bare', null, [45, 48, 52], null]],
    checkpoint: null,
    joinedSeq: 1,
    afterSeq: 44,
    rule: 'since_joined',
  },
  {
    name: 'a bare-delta turn entirely inside the window does not move the start',
    headSeq: 100,
    runs: [['alice', 'bare', null, [60, 61], null]],
    checkpoint: null,
    joinedSeq: 1,
    afterSeq: 50,
    rule: 'since_joined',
  },
  {
    name: 'maxReplay 0 with a run open at the head still includes that run',
    headSeq: 20,
    runs: [['alice', 'a', 18, [19, 20], null]],
    checkpoint: null,
    joinedSeq: 1,
    policy: { maxReplay: 0 },
    afterSeq: 17,
    rule: 'since_joined',
  },
  {
    name: 'an empty thread',
    headSeq: 0,
    checkpoint: null,
    joinedSeq: 1,
    afterSeq: 0,
    rule: 'since_joined',
    maxReads: 0,
  },
];

describe('selectReplayWindow', () => {
  it('defaults to since_joined / catch_up / 50', () => {
    expect(DEFAULT_BACKLOG_POLICY).toEqual({
      onFirstJoin: 'since_joined',
      onResume: 'catch_up',
      maxReplay: 50,
      maxExpansion: 1000,
    });
  });

  it.each(cases)('$name', ({ headSeq, runs, checkpoint, joinedSeq, policy, afterSeq, rule, maxReads }) => {
    const result = resolve(threadLog(headSeq, runs), { checkpoint, joinedSeq, policy: policy ?? {} });
    expect(result.decision.afterSeq).toBe(afterSeq);
    expect(result.decision.rule).toBe(rule);
    if (maxReads !== undefined) expect(result.reads).toBeLessThanOrEqual(maxReads);
  });

  it('the first request covers the window plus a margin, in one page', () => {
    const decision = selectReplayWindow({
      checkpoint: null,
      joinedSeq: 1,
      headSeq: 500,
      policy: DEFAULT_BACKLOG_POLICY,
      events: [],
    });
    expect(decision).toEqual({ kind: 'need_events', beforeSeq: 501, limit: 150 });
  });

  it('a window with complete runs is decided from the first page alone', () => {
    const result = resolve(threadLog(500, [['alice', 'a', 460, [461], 462]]), { checkpoint: null, joinedSeq: 1 });
    expect(result.decision.afterSeq).toBe(450);
    expect(result.reads).toBe(1);
    expect(result.eventsRead).toBe(150);
  });

  it('reports how far it expanded', () => {
    const result = resolve(threadLog(100, [['alice', 'a', 45, [52], 55]]), { checkpoint: 5, joinedSeq: 2 });
    expect(result.decision.expandedBy).toBe(6);
  });
});
