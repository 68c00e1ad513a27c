/**
 * Whether the bot answers a drained turn (issue 5, "Beyond the seed"). Pure.
 *
 * - `respondTo: all` answers every turn; `humans` only turns with a human
 *   author; `mentions` only turns that name the bot (`@<principalId>`, or
 *   `@<display name>`).
 * - Whatever `respondTo` says, the bot takes no turn that answers bots alone
 *   once `botOnlyStreak` (counted on the thread by `ThreadLedger`, whichever
 *   bots took them) has reached `maxBotOnlyTurns`.
 */

import { assertNever } from '@bubble/protocol';

export type RespondTo = 'all' | 'mentions' | 'humans';

export interface TurnPart {
  principalId: string;
  text: string;
}

export interface TurnPolicyInput {
  parts: readonly TurnPart[];
  respondTo: RespondTo;
  selfId: string;
  selfDisplayName?: string;
  /** Whether a principal is a bot; unknown principals count as humans (a person is never ignored by mistake). */
  isBot: (principalId: string) => boolean;
  /** Turns answered in a row so far that had only bot authors. */
  botOnlyStreak: number;
  maxBotOnlyTurns: number;
}

export type TurnDecision =
  | { answer: true; botOnly: boolean }
  | { answer: false; reason: 'no_text' | 'not_mentioned' | 'no_human' | 'bot_only_limit' };

export function decideTurn(input: TurnPolicyInput): TurnDecision {
  const parts = input.parts.filter((part) => part.principalId !== input.selfId && part.text.trim() !== '');
  if (parts.length === 0) return { answer: false, reason: 'no_text' };
  const botOnly = parts.every((part) => input.isBot(part.principalId));
  switch (input.respondTo) {
    case 'all':
      break;
    case 'humans':
      if (botOnly) return { answer: false, reason: 'no_human' };
      break;
    case 'mentions':
      if (!parts.some((part) => mentions(part.text, input.selfId, input.selfDisplayName)))
        return { answer: false, reason: 'not_mentioned' };
      break;
    default:
      return assertNever(input.respondTo, 'respondTo');
  }
  if (botOnly && input.botOnlyStreak >= input.maxBotOnlyTurns) return { answer: false, reason: 'bot_only_limit' };
  return { answer: true, botOnly };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `@id` or `@Display Name`, not followed by more name characters, case-insensitive. */
export function mentions(text: string, selfId: string, displayName?: string): boolean {
  const names = [selfId, ...(displayName && displayName.trim() !== '' ? [displayName.trim()] : [])];
  return names.some((name) => new RegExp(`(^|[^\\w@])@${escapeRegExp(name)}(?![\\w.-]*\\w)`, 'i').test(text));
}
