import { UiChunkSchema, validateEventData, type DataUiChunk, type EventEnvelope, type UiChunk } from '@bubble/protocol';
import { stringifyForDisplay } from '../tools/stringify-for-display.js';

/** How long a JSON value may get in a rendered line before it is cut. */
const MAX_JSON_CHARS = 400;

interface OpenText {
  readonly seq: number;
  readonly principalId: string;
  readonly kind: 'text' | 'reasoning';
  text: string;
}

/**
 * Turns a thread's events, in seq order, into readable lines: a run's text is joined into one
 * message (printed when its `text-end` or the run's `run_finished` arrives), reasoning is marked,
 * tool calls show their input and output, approvals, interrupts and membership changes get a line
 * each. A delta that arrives without its `text-start` (a bare-delta turn, or a tail that started
 * mid-message) is printed as it lands. Stateful but free of I/O: feed events, get lines.
 */
export class ThreadRenderer {
  /** Open text and reasoning blocks, by `runId` then block id. */
  private readonly open = new Map<string, Map<string, OpenText>>();

  render(event: EventEnvelope): string[] {
    const who = event.principalId;
    const at = `#${event.seq}`;
    switch (event.type) {
      case 'message_part':
        return this.renderPart(event);
      case 'run_started':
        return [];
      case 'run_finished': {
        const data = parsed(event);
        const runId = String(data.runId);
        const lines = this.flushRun(runId);
        const status = data.status;
        if (status === 'interrupted') lines.push(`${at} ${who}: [run ${runId} was interrupted]`);
        if (status === 'error') {
          const error = data.error as { code?: string; message?: string } | undefined;
          lines.push(
            `${at} ${who}: [run ${runId} failed${error ? `: ${error.code ?? 'error'}: ${error.message ?? ''}` : ''}]`,
          );
        }
        return lines;
      }
      case 'run_interrupt_requested': {
        const data = parsed(event);
        return [`${at} ${who} asked to stop run ${String(data.runId)}${suffix(data.reason)}`];
      }
      case 'tool_call_approval': {
        const data = parsed(event);
        const verb = data.decision === 'allow' ? 'approved' : 'denied';
        return [`${at} ${who} ${verb} tool call ${String(data.toolCallId)}${suffix(data.reason)}`];
      }
      case 'tool_call_result': {
        const data = parsed(event);
        const label = data.isError === true ? 'an error result' : 'a result';
        return [`${at} ${who} supplied ${label} for tool call ${String(data.toolCallId)}: ${json(data.output)}`];
      }
      case 'participant_added': {
        const data = parsed(event);
        return [`${at} * ${String(data.principalId)} joined as ${String(data.role)} (added by ${String(data.by)})`];
      }
      case 'participant_removed': {
        const data = parsed(event);
        const left = data.by === data.principalId;
        return [`${at} * ${String(data.principalId)} ${left ? 'left' : `was removed by ${String(data.by)}`}`];
      }
      case 'artifact_updated': {
        const data = parsed(event);
        return [
          `${at} * artifact ${String(data.name)} v${String(data.version)} (${String(data.mediaType)}) written by ${String(data.by)}`,
        ];
      }
      default:
        return [`${at} ${who} [${event.type}] ${json(event.data)}`];
    }
  }

  /** Prints whatever text is still open (for the end of a finite tail). */
  flush(): string[] {
    const lines: string[] = [];
    for (const runId of [...this.open.keys()]) lines.push(...this.flushRun(runId));
    return lines;
  }

  private renderPart(event: EventEnvelope): string[] {
    const runId = String(event.data.runId);
    const chunkParse = UiChunkSchema.safeParse(event.data.chunk);
    if (!chunkParse.success) return [`#${event.seq} ${event.principalId} [unreadable message part]`];
    const chunk: UiChunk = chunkParse.data;
    const at = `#${event.seq}`;
    const who = event.principalId;
    switch (chunk.type) {
      case 'text-start':
        this.openBlock(runId, chunk.id, { seq: event.seq, principalId: who, kind: 'text', text: '' });
        return [];
      case 'reasoning-start':
        this.openBlock(runId, chunk.id, { seq: event.seq, principalId: who, kind: 'reasoning', text: '' });
        return [];
      case 'text-delta':
      case 'reasoning-delta': {
        const block = this.open.get(runId)?.get(chunk.id);
        if (block !== undefined) {
          block.text += chunk.delta;
          return [];
        }
        return [message(event.seq, who, chunk.type === 'reasoning-delta' ? 'reasoning' : 'text', chunk.delta)];
      }
      case 'text-end':
      case 'reasoning-end': {
        const blocks = this.open.get(runId);
        const block = blocks?.get(chunk.id);
        if (blocks === undefined || block === undefined) return [];
        blocks.delete(chunk.id);
        if (blocks.size === 0) this.open.delete(runId);
        return [message(block.seq, block.principalId, block.kind, block.text)];
      }
      case 'tool-input-available': {
        const child = (chunk.providerMetadata?.bubble as { childThreadId?: unknown } | undefined)?.childThreadId;
        const where = typeof child === 'string' ? ` (runs in subthread ${child})` : '';
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

  private openBlock(runId: string, id: string, block: OpenText): void {
    let blocks = this.open.get(runId);
    if (blocks === undefined) {
      blocks = new Map();
      this.open.set(runId, blocks);
    }
    blocks.set(id, block);
  }

  private flushRun(runId: string): string[] {
    const blocks = this.open.get(runId);
    if (blocks === undefined) return [];
    this.open.delete(runId);
    return [...blocks.values()]
      .filter((block) => block.text !== '')
      .map((block) => message(block.seq, block.principalId, block.kind, block.text));
  }
}

function message(seq: number, who: string, kind: 'text' | 'reasoning', text: string): string {
  const label = kind === 'reasoning' ? `${who} (thinking)` : who;
  return `#${seq} ${label}: ${text.replace(/\n/g, '\n    ')}`;
}

function parsed(event: EventEnvelope): Record<string, unknown> {
  const result = validateEventData(event.type, event.data);
  return result.ok ? result.data : event.data;
}

function suffix(reason: unknown): string {
  return typeof reason === 'string' && reason !== '' ? `: ${reason}` : '';
}

function json(value: unknown): string {
  const text = stringifyForDisplay(value);
  return text.length > MAX_JSON_CHARS ? `${text.slice(0, MAX_JSON_CHARS)}…` : text;
}
