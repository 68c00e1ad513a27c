import type { EventEnvelope } from '@bubble/protocol';

/**
 * Counting answers from a thread's events alone, as a reader of the thread
 * would: a person's message is a run of theirs with text (anchored at its
 * first seq); a bot answered it when one of the bot's runs names that seq in
 * `run_started.replyTo` or `run_finished.replyTo`.
 */
export interface AnswerCount {
  /** Anchor seq of each person's message → how many runs of the bot answered it. */
  answers: Map<number, number>;
  /** The bot's runs with a run_started and no run_finished. */
  open: string[];
}

export function humanMessages(events: readonly EventEnvelope[], isHuman: (principalId: string) => boolean): number[] {
  const first = new Map<string, number>();
  const withText = new Set<string>();
  for (const event of events) {
    if (!isHuman(event.principalId)) continue;
    const runId = event.data.runId;
    if (typeof runId !== 'string') continue;
    const key = `${event.principalId}\u0000${runId}`;
    if ((event.type === 'run_started' || event.type === 'message_part') && !first.has(key)) first.set(key, event.seq);
    const chunk = event.data.chunk as { type?: string; delta?: string } | undefined;
    if (event.type === 'message_part' && chunk?.type === 'text-delta' && (chunk.delta ?? '').trim() !== '')
      withText.add(key);
  }
  return [...first]
    .filter(([key]) => withText.has(key))
    .map(([, seq]) => seq)
    .sort((a, b) => a - b);
}

export function countAnswers(
  events: readonly EventEnvelope[],
  botId: string,
  messages: readonly number[],
): AnswerCount {
  const answers = new Map<number, number>(messages.map((seq) => [seq, 0]));
  const started = new Set<string>();
  const finished = new Set<string>();
  for (const event of events) {
    if (event.principalId !== botId) continue;
    const runId = event.data.runId;
    if (typeof runId !== 'string') continue;
    if (event.type === 'run_started') started.add(runId);
    if (event.type === 'run_finished') finished.add(runId);
    if (event.type !== 'run_started' && event.type !== 'run_finished') continue;
    const replyTo = event.data.replyTo;
    if (!Array.isArray(replyTo)) continue;
    for (const seq of replyTo)
      if (answers.has(seq as number)) answers.set(seq as number, answers.get(seq as number)! + 1);
  }
  return { answers, open: [...started].filter((runId) => !finished.has(runId)) };
}

/** Messages answered other than exactly once, as `seq×count`, for a readable failure. */
export function notExactlyOnce(count: AnswerCount): string[] {
  return [...count.answers].filter(([, n]) => n !== 1).map(([seq, n]) => `${seq}×${n}`);
}

/**
 * Bot turns that answered only bots, in a row, at their longest: a person's
 * words reset the count; a bot run replying only to bots' messages adds one.
 * A run the loop guard closed before Claude said a word (`interruptReason`
 * "loop guard: …") is not a turn.
 */
export function longestBotOnlyStreak(
  events: readonly EventEnvelope[],
  isBot: (principalId: string) => boolean,
): number {
  const guarded = new Set(
    events
      .filter((e) => e.type === 'run_finished' && String(e.data.interruptReason ?? '').startsWith('loop guard'))
      .map((e) => `${e.principalId}\u0000${String(e.data.runId)}`),
  );
  const author = new Map<number, string>();
  const seen = new Set<string>();
  let streak = 0;
  let longest = 0;
  for (const event of events) {
    const runId = event.data.runId;
    if (typeof runId !== 'string') continue;
    const key = `${event.principalId}\u0000${runId}`;
    if ((event.type === 'run_started' || event.type === 'message_part') && !seen.has(key)) {
      seen.add(key);
      author.set(event.seq, event.principalId);
    }
    const chunk = event.data.chunk as { type?: string; delta?: string } | undefined;
    if (
      !isBot(event.principalId) &&
      event.type === 'message_part' &&
      chunk?.type === 'text-delta' &&
      (chunk.delta ?? '').trim() !== ''
    )
      streak = 0;
    if (
      isBot(event.principalId) &&
      event.type === 'run_started' &&
      !guarded.has(key) &&
      Array.isArray(event.data.replyTo) &&
      (event.data.replyTo as number[]).length > 0
    ) {
      const botOnly = (event.data.replyTo as number[]).every((seq) => isBot(author.get(seq) ?? ''));
      streak = botOnly ? streak + 1 : 0;
      longest = Math.max(longest, streak);
    }
  }
  return longest;
}
