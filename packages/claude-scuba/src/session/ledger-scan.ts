import type { EventEnvelope } from '@bubble/protocol';
import { isBubbleApiError } from '@bubble/sdk';
import type { Logger } from 'pino';
import type { SessionClient } from './session-options.js';
import { botRestartedEvent } from './session-notices.js';
import type { ThreadLedger } from './thread-ledger.js';

/** Events per page read. */
const PAGE = 1000;
/** Pages read at most when a thread starts, to learn what the bot already answered. */
const SCAN_MAX_PAGES = 20;

export interface LedgerScanInput {
  threadId: string;
  client: Pick<SessionClient, 'readEvents' | 'appendEvents'>;
  ledger: Pick<ThreadLedger, 'observe' | 'ownOpenRuns'>;
  /** Where to start reading (the settlement checkpoint, or the replay start when that is lower). */
  after: number;
  /** Runs this process has open, on every thread: those are live, not left over from a crash. */
  liveRuns: ReadonlySet<string>;
  logger: Logger;
}

/**
 * Reads the thread from `after` to its head into the ledger: what the bot's
 * runs already answered (so a replay never answers a message twice, whatever
 * the checkpoint says), and which of its runs a crash left open: those are
 * closed now, `bot_restarted`, before anything new starts.
 */
export async function scanThreadLedger(input: LedgerScanInput): Promise<void> {
  const { threadId, client, ledger, logger } = input;
  let after = input.after;
  for (let page = 0; page < SCAN_MAX_PAGES; page += 1) {
    let events: EventEnvelope[];
    try {
      ({ events } = await client.readEvents(threadId, { after, limit: PAGE }));
    } catch (error) {
      // The thread starts anyway, knowing less: the checkpoint still holds back what it settled.
      logger.warn({ err: error, after }, 'could not read the thread to learn what I already answered');
      break;
    }
    for (const event of events) ledger.observe(event);
    if (events.length < PAGE) break;
    after = events.at(-1)!.seq;
    if (page === SCAN_MAX_PAGES - 1)
      logger.warn({ after }, 'the thread is long: read what the bot answered in its last 20,000 events only');
  }
  const leftOpen = ledger.ownOpenRuns.filter((runId) => !input.liveRuns.has(runId));
  if (leftOpen.length === 0) return;
  logger.warn({ runs: leftOpen }, 'closing my runs that a restart left open');
  for (const runId of leftOpen) {
    try {
      await client.appendEvents(threadId, [botRestartedEvent(runId)]);
    } catch (error) {
      // 409: the run was closed meanwhile (another start of this bot did it). Anything else is logged.
      if (!(isBubbleApiError(error) && error.code === 'conflict'))
        logger.warn({ err: error, runId }, 'could not close a run left open');
    }
  }
}
