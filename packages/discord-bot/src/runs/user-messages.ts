import type { EngineErrorClassification } from '@bubble/engine';

/** What a failed turn tells the people in the thread, and whether the detail needs a log line of its own. */
export interface FailureNotice {
  text: string;
  /** A short id printed to the user and logged with the detail, so an operator can find it. */
  ref: string | undefined;
}

/**
 * Turns a classified engine failure into Discord text (pure; the reference id
 * is passed in). Auth failures name the sender, whose token it was; a rate
 * limit says when it resets (Discord renders `<t:…:R>` in each reader's own
 * time zone); everything else is short, with a reference to the log line.
 */
export function failureNotice(classified: EngineErrorClassification, senderId: string, ref: string): FailureNotice {
  switch (classified.kind) {
    case 'auth':
      return {
        text:
          `<@${senderId}>, Claude did not accept your token (it may have expired or been revoked). ` +
          `Run \`claude setup-token\` on your own machine, then \`/link\` here again.`,
        ref: undefined,
      };
    case 'rate_limit': {
      const at = classified.resetAt === undefined ? Number.NaN : Date.parse(classified.resetAt);
      const when = Number.isFinite(at)
        ? `it resets <t:${Math.floor(at / 1000)}:R> (<t:${Math.floor(at / 1000)}:f>)`
        : 'try again later';
      return { text: `<@${senderId}>, your Claude usage limit is reached: ${when}.`, ref: undefined };
    }
    case 'max_turns':
      return { text: 'I stopped: this reply reached its step limit. Ask me to continue.', ref: undefined };
    case 'interrupted':
      return { text: 'Stopped.', ref: undefined };
    case 'overloaded':
    case 'network':
    case 'budget':
    case 'session_not_found':
    case 'sandbox_unavailable':
    case 'unknown':
      return { text: `Something went wrong on my side, sorry (ref \`${ref}\`). Try again in a moment.`, ref };
  }
}
