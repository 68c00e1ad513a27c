import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventEnvelope } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { deepFreeze, FIXTURE_DIR, recordedThreads } from './__fixtures__/fixtures.js';
import { foldEvents, foldThread } from './fold-thread.js';
import { emptyThreadState, runOf, runsOf, type ThreadState, threadSnapshot, toolCallOf } from './thread-state.js';

/**
 * Golden tests: every thread under `__fixtures__/*.jsonl` was recorded from the whole product
 * (`record-threads.mjs`: the real server, claude-scuba and the Claude CLI against the model
 * double) and is folded here and compared with `<name>.expected.json`.
 * `UPDATE_GOLDEN=1` rewrites the expectations: review the diff by eye.
 */
const update = process.env.UPDATE_GOLDEN === '1';
const threads = recordedThreads();

/** The run an event may change: its own, or for an answer the run that shows the call. */
function runTouchedBy(state: ThreadState, event: EventEnvelope): string | undefined {
  const { runId, toolCallId } = event.data;
  if (typeof runId === 'string') return runId;
  return typeof toolCallId === 'string' ? toolCallOf(state, toolCallId)?.runId : undefined;
}

describe('the fold of recorded threads', () => {
  it('has recorded threads to fold', () => {
    expect(threads.length).toBeGreaterThanOrEqual(8);
  });

  it.each(threads.map((thread) => [thread.name, thread.events] as const))('%s', (name, events) => {
    let state: ThreadState = deepFreeze(emptyThreadState());
    for (const event of events) state = deepFreeze(foldThread(state, event));
    const expectedPath = join(FIXTURE_DIR, `${name}.expected.json`);
    const snapshot = threadSnapshot(state);
    if (update) writeFileSync(expectedPath, `${JSON.stringify(snapshot, null, 2)}\n`);
    expect(existsSync(expectedPath), `${expectedPath} is missing: run with UPDATE_GOLDEN=1`).toBe(true);
    expect(snapshot).toEqual(JSON.parse(readFileSync(expectedPath, 'utf8')));
    expect(state.skipped).toEqual([]);
    // The indexes find every run and call where the lists hold it.
    for (const run of snapshot.runs) expect(runOf(state, run.runId)).toBe(run);
    for (const call of snapshot.toolCalls) expect(toolCallOf(state, call.toolCallId)).toBe(call);
  });
});

describe('folding in pieces', () => {
  it.each(threads.map((thread) => [thread.name, thread.events] as const))(
    '%s: resuming from the state of any prefix, even with an overlap replayed, ends where one pass ends',
    (_name, events) => {
      const whole = foldEvents(events);
      for (let cut = 0; cut <= events.length; cut++) {
        const prefix = foldEvents(events.slice(0, cut));
        expect(foldEvents(events.slice(cut), prefix)).toEqual(whole);
        // A resubscribe from a few seqs back replays what the prefix already holds.
        expect(foldEvents(events.slice(Math.max(0, cut - 3)), prefix)).toEqual(whole);
      }
    },
  );

  it.each(threads.map((thread) => [thread.name, thread.events] as const))(
    '%s: each event leaves every run it does not name the very same object',
    (_name, events) => {
      let state = emptyThreadState();
      for (const event of events) {
        const next = foldThread(state, event);
        const touched = runTouchedBy(state, event);
        for (const run of runsOf(state)) if (run.runId !== touched) expect(runOf(next, run.runId)).toBe(run);
        state = next;
      }
    },
  );
});
