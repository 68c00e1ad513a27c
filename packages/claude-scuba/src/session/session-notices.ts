import type { BubbleEventDraft } from '../translate/bubble-draft.js';

/**
 * What a session says in words of its own, and the events that carry them.
 * Pure: run ids come in.
 */

/** A short run of the bot's own that says something about itself (not an answer to anyone). */
export function noticeEvents(runId: string, text: string): BubbleEventDraft[] {
  const textId = `${runId}:t0`;
  return [
    { type: 'run_started', data: { runId }, clientEventId: `${runId}:start` },
    { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: textId } }, clientEventId: `${runId}:1` },
    {
      type: 'message_part',
      data: { runId, chunk: { type: 'text-delta', id: textId, delta: text } },
      clientEventId: `${runId}:2`,
    },
    { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: textId } }, clientEventId: `${runId}:3` },
    { type: 'run_finished', data: { runId, status: 'completed' }, clientEventId: `${runId}:finish` },
  ];
}

/** Closes a run of the bot's that a restart left open (its id makes a second close by another start a 409). */
export function botRestartedEvent(runId: string): BubbleEventDraft {
  return {
    type: 'run_finished',
    data: {
      runId,
      status: 'error',
      error: { code: 'bot_restarted', message: 'The bot restarted before this reply was finished.' },
    },
    clientEventId: `${runId}:bot-restarted`,
  };
}

/** The first turn of a thread where the sandbox cannot start. */
export function toolsOffText(reason: string): string {
  return (
    `Tools are off: this bot runs commands only inside Claude Code's sandbox, and the sandbox ` +
    `cannot start on its machine (${reason}). I can still talk, but I will not run any tool ` +
    `until my owner fixes that.`
  );
}

/** Claude failed this many times in a row. */
export function crashLoopText(failures: number, lastReason: string, maxBackoffSeconds: number): string {
  return (
    `Claude keeps failing to start on my machine (${failures} times in a row; last: ` +
    `${lastReason}). I keep trying, at most ${maxBackoffSeconds} s apart, and will answer ` +
    `what is written here once it works.`
  );
}

/** The error text on a call that will get no result from the CLI that asked it (that CLI was closed). */
export function setAsideText(runStopped: boolean): string {
  return (
    `This call waited for approval while its Claude process was closed to free a slot for ` +
    `another thread; ${runStopped ? 'the run was stopped.' : 'Claude was told the answer.'}`
  );
}

/** How a call parked while its CLI was closed was settled. */
export interface AwayDecision {
  behavior: string;
  /** Display name of who answered, or undefined when nobody did. */
  by: string | undefined;
  source: string;
  message?: string;
}

/** One answer, as Claude is told it when the query resumes (an allowed call is to be made again). */
export function awayAnswerText(toolName: string, decision: AwayDecision): string {
  const who = decision.by ?? 'Nobody';
  if (decision.behavior === 'allow') return `${who} allowed your ${toolName} call; make the same call again now.`;
  if (decision.source === 'result')
    return `${who} answered your ${toolName} call in its place; make the same call again to receive that answer.`;
  return `Your ${toolName} call was not allowed (${decision.message ?? 'denied'}); carry on without it.`;
}

/** The message the resumed query gets: every answer given while it was closed. */
export function resumeText(answers: readonly string[]): string {
  return `While these calls waited for approval your process was stopped to free a slot, and restarted now. ${answers.join(' ')}`;
}
