import { type CustomThreadEvent, type EventEnvelope, parseEvent, type ThreadEventOf } from '@bubble/protocol';
import { foldThread, foldTypedEvent } from '../fold/fold-thread.js';
import { controlNotice, noticeText } from '../fold/notice-text.js';
import { emptyThreadState, type RunState, runsOf, type ThreadState } from '../fold/thread-state.js';
import { stringifyForDisplay } from './stringify-for-display.js';

/** Longest rendering of a JSON value (tool inputs and outputs, custom event data). */
const MAX_JSON_CHARS = 300;
/** Longest message line. */
const MAX_TEXT_CHARS = 4000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more chars)`;
}

function json(value: unknown): string {
  return clip(stringifyForDisplay(value), MAX_JSON_CHARS);
}

interface Line {
  readonly seq: number;
  readonly text: string;
}

/**
 * Renders a page of events as compact transcript lines for a model, each starting with
 * `#seq who`, in seq order. Messages are read from the thread fold of the page: a run's text
 * parts make one line at the seq of their first delta, until a line of that run's own (a tool
 * call, its result, a file, an error) comes between. Every other event is a line of its own:
 * tool calls and results, approvals, participant changes, artifact writes, custom events.
 * Reasoning, steps and data chunks are not shown. Pure.
 */
export function renderTranscript(events: readonly EventEnvelope[]): string[] {
  const lines: Line[] = [];
  /** Per run, the seqs of its own lines: text is not joined across them. */
  const runLines = new Map<string, number[]>();
  let state: ThreadState = emptyThreadState();

  for (const envelope of events) {
    if (envelope.seq <= state.lastSeq) continue;
    const at = `#${envelope.seq}`;
    const who = envelope.principalId;
    const parsed = parseEvent(envelope);
    if (!parsed.ok) {
      state = foldThread(state, envelope);
      // A type nobody here knows is shown as it is; a known one with broken data is left out.
      if (parsed.error.code === 'unknown_type')
        lines.push({ seq: envelope.seq, text: `${at} ${who} ${envelope.type} ${json(envelope.data)}` });
      continue;
    }
    const event = parsed.event;
    state = foldTypedEvent(state, event);
    const add = (text: string) => lines.push({ seq: event.seq, text: `${at} ${text}` });
    switch (event.type) {
      case 'message_part': {
        const text = partLine(event);
        if (text === undefined) break;
        add(`${who} ${text}`);
        const seqs = runLines.get(event.data.runId);
        if (seqs) seqs.push(event.seq);
        else runLines.set(event.data.runId, [event.seq]);
        break;
      }
      case 'run_started':
        break;
      case 'run_finished': {
        const { runId, status, error } = event.data;
        if (status !== 'completed') add(`${who} run ${runId} ended ${status}${error ? `: ${error.message}` : ''}`);
        break;
      }
      case 'run_interrupt_requested': {
        const { runId, reason } = event.data;
        add(`${who} asked to stop run ${runId}${reason ? ` (${reason})` : ''}`);
        break;
      }
      case 'tool_call_approval': {
        const { toolCallId, decision, reason } = event.data;
        add(
          `${who} ${decision === 'allow' ? 'allowed' : 'denied'} tool call ${toolCallId}${reason ? ` (${reason})` : ''}`,
        );
        break;
      }
      case 'tool_call_result': {
        const { toolCallId, isError, output } = event.data;
        add(`${who} answered tool call ${toolCallId}${isError ? ' with an error' : ''}: ${json(output)}`);
        break;
      }
      case 'participant_added':
      case 'participant_removed': {
        const { principalId, role, by } = event.data;
        const what = event.type === 'participant_added' ? `joined as ${role}` : 'left';
        lines.push({ seq: event.seq, text: `${at} ${principalId} ${what}${by !== principalId ? ` (by ${by})` : ''}` });
        break;
      }
      case 'artifact_updated': {
        const { name, version, mediaType, by } = event.data;
        lines.push({ seq: event.seq, text: `${at} ${by} wrote artifact ${name} v${version} (${mediaType})` });
        break;
      }
      case 'agent_settings':
      case 'context_reset':
      case 'file_added':
        lines.push({ seq: event.seq, text: `${at} ${noticeText(controlNotice(event))}` });
        break;
      default: {
        // Only custom events are left: a new known type fails this assignment at compile time.
        const custom: CustomThreadEvent = event;
        add(`${who} ${custom.type} ${json(custom.data)}`);
      }
    }
  }
  for (const run of runsOf(state)) lines.push(...textLines(run, runLines.get(run.runId) ?? []));
  // Stable: lines of one seq keep their order.
  return lines.sort((a, b) => a.seq - b.seq).map((line) => clip(line.text, MAX_TEXT_CHARS));
}

/** The line a chunk gets of its own, if any. */
function partLine(event: ThreadEventOf<'message_part'>): string | undefined {
  const { chunk } = event.data;
  switch (chunk.type) {
    case 'tool-input-available': {
      const bubble = chunk.providerMetadata?.bubble;
      const child = bubble?.childThreadId;
      const where = typeof child === 'string' ? ` in subthread ${child}` : '';
      return `calls tool ${chunk.toolName} (${chunk.toolCallId}) ${json(chunk.input)}${where}`;
    }
    case 'tool-output-available':
      return `tool result (${chunk.toolCallId}): ${json(chunk.output)}`;
    case 'tool-output-error':
      return `tool error (${chunk.toolCallId}): ${clip(chunk.errorText, MAX_JSON_CHARS)}`;
    case 'tool-output-denied':
      return `tool call denied (${chunk.toolCallId})`;
    case 'file':
      return `attached ${chunk.url} (${chunk.mediaType})`;
    case 'error':
      return `error: ${clip(chunk.errorText, MAX_JSON_CHARS)}`;
    default:
      // Text is read from the fold at the end; boundaries, reasoning, steps and data are not shown.
      return undefined;
  }
}

/** A run's text parts as the fold holds them, joined into lines that its own lines split. */
function textLines(run: RunState, splits: readonly number[]): Line[] {
  const lines: Array<{ seq: number; last: number; text: string }> = [];
  run.message.parts.forEach((part, index) => {
    const seq = run.partSeqs[index]?.text;
    if (part.type !== 'text' || seq === undefined) return;
    const open = lines.at(-1);
    const split =
      open !== undefined && splits.some((s) => s > Math.min(open.last, seq) && s < Math.max(open.last, seq));
    if (open !== undefined && !split) {
      open.text += part.text;
      open.last = seq;
    } else lines.push({ seq, last: seq, text: part.text });
  });
  return lines.map((line) => ({ seq: line.seq, text: `#${line.seq} ${run.principalId}: ${line.text}` }));
}
