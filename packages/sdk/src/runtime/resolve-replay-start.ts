import type { EventEnvelope } from '@bubble/protocol';
import type { BubbleClient } from '../client/bubble-client.js';
import { selectReplayWindow, type BacklogPolicy, type ReplayWindowDecision } from './replay-window.js';

export type ReplayReader = Pick<BubbleClient, 'readEvents'>;

export type ReplayStart = Extract<ReplayWindowDecision, { kind: 'start' }> & { readonly reads: number };

/**
 * The I/O edge of `selectReplayWindow`: reads pages of earlier events (`before=`) until the pure
 * function can decide where the thread starts.
 */
export async function resolveReplayStart(
  client: ReplayReader,
  input: {
    threadId: string;
    checkpoint: number | null;
    joinedSeq: number;
    headSeq: number;
    policy: BacklogPolicy;
    signal?: AbortSignal;
  },
): Promise<ReplayStart> {
  let events: EventEnvelope[] = [];
  for (let reads = 0; ; reads += 1) {
    const decision = selectReplayWindow({
      checkpoint: input.checkpoint,
      joinedSeq: input.joinedSeq,
      headSeq: input.headSeq,
      policy: input.policy,
      events,
    });
    if (decision.kind === 'start') return { ...decision, reads };
    const page = await client.readEvents(
      input.threadId,
      { before: decision.beforeSeq, limit: decision.limit },
      input.signal ? { signal: input.signal } : {},
    );
    const older = page.events.filter((event) => event.seq < decision.beforeSeq);
    if (older.length === 0) {
      // The server has nothing older although the head said otherwise: deliver what is in hand.
      // `beforeSeq - 1` is above the policy's floor, so a settled event is never delivered again.
      return {
        kind: 'start',
        afterSeq: decision.beforeSeq - 1,
        rule: input.checkpoint === null ? input.policy.onFirstJoin : input.policy.onResume,
        expandedBy: 0,
        reads: reads + 1,
      };
    }
    events = [...older, ...events];
  }
}
