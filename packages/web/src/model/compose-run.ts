import type { NewEvent } from '@bubble/protocol';

/**
 * A message typed by a person as one complete run, to be appended in one batch:
 * `run_started`, the text as one text part, `run_finished`. Every event has a
 * `clientEventId` derived from the run id, so a retried send is a replay and
 * never a duplicate.
 */
export function composeRun(runId: string, text: string): NewEvent[] {
  const part = (n: number, chunk: Record<string, unknown>): NewEvent => ({
    type: 'message_part',
    data: { runId, chunk },
    clientEventId: `${runId}:${n}`,
  });
  return [
    { type: 'run_started', data: { runId }, clientEventId: `${runId}:0` },
    part(1, { type: 'text-start', id: `${runId}:t0` }),
    part(2, { type: 'text-delta', id: `${runId}:t0`, delta: text }),
    part(3, { type: 'text-end', id: `${runId}:t0` }),
    { type: 'run_finished', data: { runId, status: 'completed' }, clientEventId: `${runId}:4` },
  ];
}

/** What Enter does in the composer: send, or (with Shift, or while an IME composes) nothing special. */
export function enterSends(key: { key: string; shiftKey: boolean; isComposing: boolean }): boolean {
  return key.key === 'Enter' && !key.shiftKey && !key.isComposing;
}
