import { narrowSdkMessage } from '@bubble/engine';
import type { BubbleEventDraft } from './bubble-draft.js';
import { SdkToBubble, type TranslatorSignal } from './sdk-to-bubble.js';

/**
 * Replays a recorded SDK stream (JSONL, one SDK message a line) through the
 * translator, for golden tests. Lines of type `__harness` in hand-made
 * fixtures stand for what the session does between messages:
 * `{"type":"__harness","action":"begin_run","runId","replyTo","userMessageUuid"}` and
 * `{"type":"__harness","action":"interrupt","runId","by","reason"}`.
 * A fixture without a begin_run directive (recorded from the real CLI) gets
 * one run begun before its first line, answering the first pushed uuid seen.
 */
export interface GoldenOutput {
  /** Events in append order, each with the index of the SDK line that produced it. */
  events: Array<{ line: number } & BubbleEventDraft>;
  signals: Array<{ line: number } & Record<string, unknown>>;
}

export function replayFixture(text: string): GoldenOutput {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  let unsolicited = 0;
  const translator = new SdkToBubble({ scope: null, newRunId: () => `run-u${++unsolicited}`, now: () => new Date('2026-11-29T20:00:00Z') });
  const out: GoldenOutput = { events: [], signals: [] };
  const hasBegin = lines.some((line) => line.type === '__harness' && line.action === 'begin_run');
  if (!hasBegin) {
    const uuid = lines.map((line) => line.user_message_uuid ?? (line.user_message_uuids as string[] | undefined)?.[0]).find((u) => typeof u === 'string');
    out.events.push(...translator.beginRun({ runId: 'run-1', replyTo: [1], ...(typeof uuid === 'string' ? { userMessageUuid: uuid } : {}) }).map((e) => ({ line: -1, ...e })));
  }
  lines.forEach((line, index) => {
    if (line.type === '__harness') {
      if (line.action === 'begin_run') {
        const begun = translator.beginRun({
          runId: String(line.runId),
          ...(Array.isArray(line.replyTo) ? { replyTo: line.replyTo as number[] } : {}),
          ...(typeof line.userMessageUuid === 'string' ? { userMessageUuid: line.userMessageUuid } : {}),
        });
        out.events.push(...begun.map((e) => ({ line: index, ...e })));
      } else if (line.action === 'interrupt') {
        translator.noteInterrupt(String(line.runId), { by: String(line.by), ...(typeof line.reason === 'string' ? { reason: line.reason } : {}) });
      }
      return;
    }
    const step = translator.push(narrowSdkMessage(line));
    out.events.push(...step.events.map((e) => ({ line: index, ...e })));
    out.signals.push(...step.signals.map((s) => ({ line: index, ...summarize(s) })));
  });
  return out;
}

function summarize(signal: TranslatorSignal): Record<string, unknown> {
  if (signal.kind === 'routed') {
    const m = signal.message;
    return { kind: 'routed', parentToolUseId: signal.parentToolUseId, message: m.kind };
  }
  return { ...signal };
}
