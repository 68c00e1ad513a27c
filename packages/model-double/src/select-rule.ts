import type { RequestInfo } from './request-info.js';
import type { Match, Rule, Script, TextMatch } from './script.js';

/**
 * Picks the rule that answers a request: the first rule that is not used up
 * and whose `match` holds. `used[i]` counts the requests rule i has answered.
 * Pure; the caller increments the count.
 */
export function selectRule(script: Script, used: readonly number[], info: RequestInfo): number | null {
  for (let i = 0; i < script.length; i++) {
    const rule = script[i] as Rule;
    if (isUsedUp(rule, used[i] ?? 0)) continue;
    if (matches(rule.match, info)) return i;
  }
  return null;
}

export function isUsedUp(rule: Rule, used: number): boolean {
  const times = rule.times ?? 1;
  return times !== 'always' && used >= times;
}

export function matches(match: Match | undefined, info: RequestInfo): boolean {
  if (match === undefined) return true;
  if (match.subagent !== undefined && match.subagent !== info.subagent) return false;
  if (match.sessionId !== undefined && match.sessionId !== info.sessionId) return false;
  if (match.taskNotification !== undefined && match.taskNotification !== (info.taskNotification !== null)) return false;
  if (match.text !== undefined && !textMatches(match.text, info.lastUserText)) return false;
  if (match.toolResult !== undefined) {
    const want = match.toolResult;
    const hit = info.toolResults.some(
      (r) =>
        want === true ||
        ((want.name === undefined || want.name === r.toolName) &&
          (want.isError === undefined || want.isError === r.isError)),
    );
    if (!hit) return false;
  }
  return true;
}

function textMatches(want: TextMatch, text: string): boolean {
  if (typeof want === 'string') return text.includes(want);
  return new RegExp(want.regex, want.flags).test(text);
}
