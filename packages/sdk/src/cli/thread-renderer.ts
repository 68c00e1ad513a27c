import {
  type CustomThreadEvent,
  type DataUiChunk,
  type EventEnvelope,
  parseEvent,
  type ThreadEventOf,
} from '@bubble/protocol';
import { foldThread, foldTypedEvent } from '../fold/fold-thread.js';
import { controlNotice, noticeText } from '../fold/notice-text.js';
import { openBlockIndex, openBlocks } from '../fold/message-assembly.js';
import { emptyThreadState, type RunState, runOf, runsOf, type ThreadState } from '../fold/thread-state.js';
import { stringifyForDisplay } from '../tools/stringify-for-display.js';

/** How long a JSON value may get in a rendered line before it is cut. */
const MAX_JSON_CHARS = 400;

/**
 * Turns a thread's events, in seq order, into readable lines, as a view over the thread fold:
 * each event is folded, and the lines say what it did. A run's text is the fold's text part,
 * printed when its `text-end` or the run's `run_finished` arrives; reasoning is marked; tool
 * calls show their input and output; approvals, interrupts and membership changes get a line
 * each. A delta whose block never started here (a tail that began mid-message) is printed as it
 * lands. Free of I/O: feed events, get lines.
 */
export class ThreadRenderer {
  #state: ThreadState = emptyThreadState();

  render(envelope: EventEnvelope): string[] {
    const at = `#${envelope.seq}`;
    const who = envelope.principalId;
    if (envelope.seq <= this.#state.lastSeq) return [];
    const parsed = parseEvent(envelope);
    if (!parsed.ok) {
      this.#state = foldThread(this.#state, envelope);
      return [
        envelope.type === 'message_part'
          ? `${at} ${who} [unreadable message part]`
          : `${at} ${who} [unreadable ${envelope.type}: ${parsed.error.field}]`,
      ];
    }
    const event = parsed.event;
    const before = this.#state;
    const after = foldTypedEvent(before, event);
    this.#state = after;
    switch (event.type) {
      case 'message_part':
        return renderPart(event, runOf(before, event.data.runId), runOf(after, event.data.runId));
      case 'run_started':
        return [];
      case 'run_finished': {
        const { runId, status, error } = event.data;
        const run = runOf(before, runId);
        const lines = run?.status === 'streaming' ? openText(run) : [];
        if (status === 'interrupted') lines.push(`${at} ${who}: [run ${runId} was interrupted]`);
        if (status === 'error')
          lines.push(`${at} ${who}: [run ${runId} failed${error ? `: ${error.code}: ${error.message}` : ''}]`);
        return lines;
      }
      case 'run_interrupt_requested':
        return [`${at} ${who} asked to stop run ${event.data.runId}${suffix(event.data.reason)}`];
      case 'tool_call_approval': {
        const verb = event.data.decision === 'allow' ? 'approved' : 'denied';
        return [`${at} ${who} ${verb} tool call ${event.data.toolCallId}${suffix(event.data.reason)}`];
      }
      case 'tool_call_result': {
        const label = event.data.isError === true ? 'an error result' : 'a result';
        return [`${at} ${who} supplied ${label} for tool call ${event.data.toolCallId}: ${json(event.data.output)}`];
      }
      case 'participant_added': {
        const { principalId, role, by } = event.data;
        return [`${at} * ${principalId} joined as ${role} (added by ${by})`];
      }
      case 'participant_removed': {
        const { principalId, by } = event.data;
        return [`${at} * ${principalId} ${by === principalId ? 'left' : `was removed by ${by}`}`];
      }
      case 'artifact_updated': {
        const { name, version, mediaType, by } = event.data;
        return [`${at} * artifact ${name} v${version} (${mediaType}) written by ${by}`];
      }
      case 'agent_settings':
      case 'context_reset':
      case 'file_added':
        return [`${at} * ${noticeText(controlNotice(event))}`];
      default: {
        // Only custom events are left: a new known type fails this assignment at compile time.
        const custom: CustomThreadEvent = event;
        return [`${at} ${who} [${custom.type}] ${json(custom.data)}`];
      }
    }
  }

  /** Prints whatever text is still open in runs still streaming (for the end of a finite tail). */
  flush(): string[] {
    return runsOf(this.#state)
      .filter((run) => run.status === 'streaming')
      .flatMap(openText);
  }
}

function renderPart(
  event: ThreadEventOf<'message_part'>,
  before: RunState | undefined,
  after: RunState | undefined,
): string[] {
  const { chunk } = event.data;
  const at = `#${event.seq}`;
  const who = event.principalId;
  switch (chunk.type) {
    case 'text-delta':
    case 'reasoning-delta': {
      const kind = chunk.type === 'text-delta' ? 'text' : 'reasoning';
      // Joined into an open block: printed when it ends. A delta with no block of its own here lands as it is.
      if (before !== undefined && openBlockIndex(before, kind, chunk.id) !== undefined) return [];
      return [message(event.seq, who, kind, chunk.delta)];
    }
    case 'text-end':
    case 'reasoning-end': {
      const kind = chunk.type === 'text-end' ? 'text' : 'reasoning';
      const index = before === undefined ? undefined : openBlockIndex(before, kind, chunk.id);
      if (index === undefined || after === undefined) return [];
      return [blockLine(after, index, kind)];
    }
    case 'tool-input-available': {
      const child = after?.childThreads[chunk.toolCallId];
      const where = child !== undefined ? ` (runs in subthread ${child})` : '';
      return [`${at} ${who} → tool ${chunk.toolName} [${chunk.toolCallId}]${where} input: ${json(chunk.input)}`];
    }
    case 'tool-input-error':
      return [`${at} ${who} → tool ${chunk.toolName} [${chunk.toolCallId}] bad input: ${chunk.errorText}`];
    case 'tool-output-available':
      return [`${at} ${who} ← tool [${chunk.toolCallId}] output: ${json(chunk.output)}`];
    case 'tool-output-error':
      return [`${at} ${who} ← tool [${chunk.toolCallId}] error: ${chunk.errorText}`];
    case 'tool-output-denied':
      return [`${at} ${who} ← tool [${chunk.toolCallId}] denied`];
    case 'tool-approval-request':
      return [`${at} ${who} ? tool call ${chunk.toolCallId} waits for approval`];
    case 'error':
      return [`${at} ${who} ! ${chunk.errorText}`];
    case 'file':
      return [`${at} ${who} attached ${chunk.url} (${chunk.mediaType})`];
    case 'source-url':
      return [`${at} ${who} cited ${chunk.url}${chunk.title ? ` (${chunk.title})` : ''}`];
    case 'source-document':
      return [`${at} ${who} cited document ${chunk.title}`];
    case 'text-start':
    case 'reasoning-start':
    case 'tool-input-start':
    case 'tool-input-delta':
    case 'start-step':
    case 'finish-step':
    case 'start':
    case 'finish':
    case 'abort':
    case 'message-metadata':
      return [];
    default: {
      // Only `data-*` chunks are left: application data with no agreed rendering. A new known
      // chunk type fails this assignment at compile time.
      const dataChunk: DataUiChunk = chunk;
      void dataChunk;
      return [];
    }
  }
}

/** The open blocks of a run with text in them, as the fold has them. */
function openText(run: RunState): string[] {
  return openBlocks(run)
    .filter((block) => textOf(run, block.index) !== '')
    .map((block) => blockLine(run, block.index, block.kind));
}

function blockLine(run: RunState, index: number, kind: 'text' | 'reasoning'): string {
  return message(run.partSeqs[index]?.added ?? run.firstSeq, run.principalId, kind, textOf(run, index));
}

function textOf(run: RunState, index: number): string {
  const part = run.message.parts[index];
  return part !== undefined && (part.type === 'text' || part.type === 'reasoning') ? part.text : '';
}

function message(seq: number, who: string, kind: 'text' | 'reasoning', text: string): string {
  const label = kind === 'reasoning' ? `${who} (thinking)` : who;
  return `#${seq} ${label}: ${text.replace(/\n/g, '\n    ')}`;
}

function suffix(reason: string | undefined): string {
  return reason !== undefined && reason !== '' ? `: ${reason}` : '';
}

function json(value: unknown): string {
  const text = stringifyForDisplay(value);
  return text.length > MAX_JSON_CHARS ? `${text.slice(0, MAX_JSON_CHARS)}…` : text;
}
