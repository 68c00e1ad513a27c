import type { EventEnvelope } from '@bubble/protocol';
import type { ScubaWorld } from './scuba-world.js';

/** Script rules and thread reads shared by the turn tests (e2e-turns, e2e-exactly-once, the soak). */

/** `n` words, `w0 w1 …`: a reply long enough to stream over several deltas. */
export const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

/** A rule that answers `match` with `n` words, `delayMs` apart (a turn still streaming when the test acts). */
export const slowRule = (match: string, n: number, delayMs: number) => ({
  name: `slow:${match}`,
  match: { text: match },
  reply: [{ type: 'text' as const, text: words(n), delayMs }],
});

/** A rule that answers `match` with `text` at once (once, or every time with `times: 'always'`). */
export const quickRule = (match: string, text: string, times?: 'always') => ({
  name: `quick:${match}`,
  match: { text: match },
  reply: [{ type: 'text' as const, text }],
  ...(times ? { times } : {}),
});

/** The bot's run ids on the thread, in order. */
export const botRuns = (w: ScubaWorld, all: EventEnvelope[]): string[] =>
  all.filter((e) => e.principalId === w.botId && e.type === 'run_started').map((e) => e.data.runId as string);

/** The bot's run_finished of `runId`, if it is on the thread. */
export const finishedOf = (w: ScubaWorld, all: EventEnvelope[], runId: string): EventEnvelope | undefined =>
  all.find((e) => e.principalId === w.botId && e.type === 'run_finished' && e.data.runId === runId);

/** Whether every run the bot started is finished. */
export const allFinished =
  (w: ScubaWorld) =>
  (all: EventEnvelope[]): boolean =>
    botRuns(w, all).every((runId) => finishedOf(w, all, runId) !== undefined);

/** Whether the bot has streamed a first text delta. */
export const firstDelta =
  (w: ScubaWorld) =>
  (all: EventEnvelope[]): boolean =>
    all.some(
      (e) =>
        e.principalId === w.botId &&
        e.type === 'message_part' &&
        (e.data.chunk as { type: string }).type === 'text-delta',
    );

/** A `message_part` chunk as the e2e tests read it. */
export type Chunk = {
  type: string;
  toolCallId?: string;
  output?: unknown;
  errorText?: string;
  providerMetadata?: { bubble?: Record<string, unknown> };
};
export const chunkOf = (e: EventEnvelope) => e.data.chunk as Chunk;

/** The bot's `message_part` of chunk `type` (and of `toolCallId`, when given). */
export const botPart = (w: Pick<ScubaWorld, 'botId'>, type: string, toolCallId?: string) => (e: EventEnvelope) =>
  e.principalId === w.botId &&
  e.type === 'message_part' &&
  chunkOf(e).type === type &&
  (toolCallId === undefined || chunkOf(e).toolCallId === toolCallId);

/** A tool output chunk's text (the CLI gives text blocks or a string). */
export const outputText = (e: EventEnvelope): string => {
  const output = chunkOf(e).output;
  return Array.isArray(output)
    ? output.map((b) => String((b as { text?: unknown }).text ?? '')).join('')
    : String(output);
};

/** The text blocks of the last user message a request carries, in order, without the CLI's `<system-reminder>` blocks. */
export const lastUserBlocks = (body: unknown): string[] => {
  const messages = (body as { messages?: Array<{ role?: string; content?: unknown }> }).messages ?? [];
  const last = messages.filter((m) => m.role === 'user').at(-1);
  if (last === undefined) return [];
  const content = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  if (!Array.isArray(content)) return [];
  return content
    .filter((b): b is { type: 'text'; text: string } => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .filter((text) => !text.trimStart().startsWith('<system-reminder>'));
};
