import { narrowSdkMessage } from '@bubble/engine';
import type { BubbleEventDraft } from './bubble-draft.js';
import { SdkToBubble, type TranslatorSignal } from './sdk-to-bubble.js';

/**
 * Replays a recorded SDK stream (JSONL, one SDK message a line) through the
 * translator, for golden tests. Lines of type `__harness` in hand-made
 * fixtures stand for what the session does between messages:
 * `{"type":"__harness","action":"begin_run","runId","replyTo","userMessageUuid"}` and
 * `{"type":"__harness","action":"interrupt","runId","by","reason"}`.
 * A fixture without directives (recorded from the real CLI) gets a run begun
 * at each `command_lifecycle` "queued" line, as the session begins one per
 * push (run-1, run-2, …, answering its command_uuid), or one run before its
 * first line when it has none.
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
  const translator = new SdkToBubble({
    scope: null,
    newRunId: () => `run-u${++unsolicited}`,
    now: () => new Date('2026-11-29T20:00:00Z'),
  });
  const out: GoldenOutput = { events: [], signals: [] };
  const directed = lines.some((line) => line.type === '__harness');
  const pushes = lines.some((line) => line.type === 'command_lifecycle' && line.state === 'queued');
  let begun = 0;
  const begin = (line: number, userMessageUuid?: string) => {
    begun += 1;
    const runId = `run-${begun}`;
    out.events.push(
      ...translator
        .beginRun({ runId, replyTo: [begun], ...(userMessageUuid ? { userMessageUuid } : {}) })
        .map((e) => ({ line, ...e })),
    );
  };
  if (!directed && !pushes) begin(-1);
  lines.forEach((line, index) => {
    if (!directed && line.type === 'command_lifecycle' && line.state === 'queued')
      begin(index, String(line.command_uuid));
    if (line.type === '__harness') {
      if (line.action === 'begin_run') {
        const begun = translator.beginRun({
          runId: String(line.runId),
          ...(Array.isArray(line.replyTo) ? { replyTo: line.replyTo as number[] } : {}),
          ...(typeof line.userMessageUuid === 'string' ? { userMessageUuid: line.userMessageUuid } : {}),
        });
        out.events.push(...begun.map((e) => ({ line: index, ...e })));
      } else if (line.action === 'interrupt') {
        translator.noteInterrupt(String(line.runId), {
          by: String(line.by),
          ...(typeof line.reason === 'string' ? { reason: line.reason } : {}),
        });
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
