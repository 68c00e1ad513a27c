import { type IsBot, toolCallsOf } from '@bubble/sdk/client';
import { EventWindow, type ReadEvents, readBackward, readForward } from './event-window';
import { MAX_EXPANSION, MAX_UNREAD_READ } from './thread-model';
import { type ThreadSignals, threadSignals } from './thread-signals';

/** At least this many of the newest events are read for a thread's signals (open runs are read whole). */
export const FEED_PAGE = 100;

/**
 * One thread as the thread list knows it: the newest events (back to the cursor, within
 * `MAX_UNREAD_READ`) folded, and read on from there as its head moves, so each refresh reads
 * only what is new. Its signals are the fold's (`threadSignals`).
 */
export class ThreadFeed {
  readonly #window = new EventWindow();
  #loaded = false;

  constructor(readonly me: string) {
    // The list shows only threads the caller holds a grant on: that is all `mayApprove` asks of participants.
    this.#window.seedParticipants({ [me]: { principalId: me, role: 'member', by: 'system', joinedSeq: 0 } });
  }

  get lastSeq(): number {
    return this.#window.lastSeq;
  }

  /** Brings the fold up to `headSeq`; the first call reads the newest page (and back to the cursor). */
  async refresh(read: ReadEvents, headSeq: number, cursor: number): Promise<void> {
    if (!this.#loaded) {
      const want = Math.max(FEED_PAGE, Math.min(headSeq - cursor, MAX_UNREAD_READ));
      this.#window.reset(await readBackward(read, headSeq + 1, want, MAX_EXPANSION));
      this.#loaded = true;
      return;
    }
    if (headSeq > this.#window.lastSeq)
      for (const event of await readForward(read, this.#window.lastSeq)) this.#window.append(event);
  }

  /** Authors of approval requests: whether each is a bot decides whether the request counts. */
  requesters(): string[] {
    return [...new Set(toolCallsOf(this.#window.state).flatMap((call) => call.requests.map((r) => r.by)))];
  }

  signals(cursor: number, isBot: IsBot): ThreadSignals {
    return threadSignals(this.#window.state, {
      cursor,
      me: this.me,
      isBot,
      windowStart: this.#window.hasOlder ? this.#window.firstSeq : 1,
    });
  }
}
