import type { RunError } from '@bubble/protocol';
import { relativeTime } from './relative-time';

/**
 * What to do about a run that failed, in one line: the codes claude-scuba reports
 * (`classifyEngineError`'s kinds in `@bubble/engine`), each with the next step for the person
 * reading the thread. The bot's own message stays as the detail, folded under it.
 */
export function runErrorAdvice(error: RunError, now: number): string {
  switch (error.code) {
    case 'rate_limit': {
      const reset = error.resetAt === undefined ? Number.NaN : Date.parse(error.resetAt);
      if (Number.isNaN(reset)) return "The bot's Claude usage limit is reached. Ask again later.";
      if (reset <= now) return "The bot's Claude usage limit was reached; it has reset since. Ask again.";
      const when = relativeTime(error.resetAt!, now).replace(/^in less than a minute$/, 'in a minute');
      return `The bot's Claude usage limit is reached. Ask again ${when}.`;
    }
    case 'overloaded':
      return 'Claude is overloaded right now. Ask again in a minute.';
    case 'network':
      return 'The bot could not reach Claude. Ask again in a minute.';
    case 'auth':
      return "The bot's Claude credential was refused. Its owner needs to give it a new one.";
    case 'max_turns':
      return 'It ran out of turns before it finished. Ask it to continue.';
    case 'budget':
      return 'It reached its cost budget. Its owner can raise the budget, then ask again.';
    case 'session_not_found':
      return 'It lost its saved session and cannot pick up where it was. Ask again to start afresh.';
    case 'sandbox_unavailable':
      return "Its sandbox cannot run on the bot's machine. Its owner needs to fix that machine.";
    case 'interrupted':
      return 'It was interrupted. Ask again to go on.';
    default:
      return 'It failed before it finished. Ask again, or show the details to its owner.';
  }
}
