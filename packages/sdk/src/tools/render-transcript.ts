import {
  ArtifactUpdatedDataSchema,
  MessagePartDataSchema,
  ParticipantChangeDataSchema,
  RunFinishedDataSchema,
  RunInterruptRequestedDataSchema,
  ToolCallApprovalDataSchema,
  ToolCallResultDataSchema,
  isKnownEventType,
  type EventEnvelope,
  type KnownEventType,
} from '@bubble/protocol';
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
  text: string;
}

/**
 * Renders a page of events as compact transcript lines for a model: one line per message (the
 * text deltas of a run joined), per tool call, result, approval, participant change, artifact
 * write or custom event, each starting with `#seq who`. Pure.
 */
export function renderTranscript(events: readonly EventEnvelope[]): string[] {
  const lines: Line[] = [];
  /** The line a run's text is being appended to, until something else of that run interrupts it. */
  const openText = new Map<string, Line>();
  const add = (seq: number, text: string): Line => {
    const line = { seq, text };
    lines.push(line);
    return line;
  };

  for (const event of events) {
    const who = event.principalId;
    const type = event.type;
    if (!isKnownEventType(type)) {
      add(event.seq, `#${event.seq} ${who} ${type} ${json(event.data)}`);
      continue;
    }
    const known: KnownEventType = type;
    switch (known) {
      case 'message_part': {
        const parsed = MessagePartDataSchema.safeParse(event.data);
        if (!parsed.success) break;
        const { runId, chunk } = parsed.data;
        const runKey = `${who}\u0000${runId}`;
        if (chunk.type === 'text-delta') {
          const open = openText.get(runKey);
          if (open) open.text += chunk.delta;
          else openText.set(runKey, add(event.seq, `#${event.seq} ${who}: ${chunk.delta}`));
          break;
        }
        let rendered: string | undefined;
        if (chunk.type === 'tool-input-available') {
          const child = (chunk.providerMetadata?.bubble as { childThreadId?: unknown } | undefined)?.childThreadId;
          rendered = `#${event.seq} ${who} calls tool ${chunk.toolName} (${chunk.toolCallId}) ${json(chunk.input)}${typeof child === 'string' ? ` in subthread ${child}` : ''}`;
        } else if (chunk.type === 'tool-output-available') {
          rendered = `#${event.seq} ${who} tool result (${chunk.toolCallId}): ${json(chunk.output)}`;
        } else if (chunk.type === 'tool-output-error') {
          rendered = `#${event.seq} ${who} tool error (${chunk.toolCallId}): ${clip(chunk.errorText, MAX_JSON_CHARS)}`;
        } else if (chunk.type === 'tool-output-denied') {
          rendered = `#${event.seq} ${who} tool call denied (${chunk.toolCallId})`;
        } else if (chunk.type === 'file') {
          rendered = `#${event.seq} ${who} attached ${chunk.url} (${chunk.mediaType})`;
        } else if (chunk.type === 'error') {
          rendered = `#${event.seq} ${who} error: ${clip(chunk.errorText, MAX_JSON_CHARS)}`;
        }
        // Text and reasoning boundaries, reasoning itself, steps and data chunks are not shown.
        if (rendered !== undefined) {
          openText.delete(runKey);
          add(event.seq, rendered);
        }
        break;
      }
      case 'run_started':
        break;
      case 'run_finished': {
        const parsed = RunFinishedDataSchema.safeParse(event.data);
        if (!parsed.success) break;
        openText.delete(`${who}\u0000${parsed.data.runId}`);
        if (parsed.data.status !== 'completed') {
          const reason = parsed.data.error ? `: ${parsed.data.error.message}` : '';
          add(event.seq, `#${event.seq} ${who} run ${parsed.data.runId} ended ${parsed.data.status}${reason}`);
        }
        break;
      }
      case 'run_interrupt_requested': {
        const parsed = RunInterruptRequestedDataSchema.safeParse(event.data);
        if (parsed.success)
          add(
            event.seq,
            `#${event.seq} ${who} asked to stop run ${parsed.data.runId}${parsed.data.reason ? ` (${parsed.data.reason})` : ''}`,
          );
        break;
      }
      case 'tool_call_approval': {
        const parsed = ToolCallApprovalDataSchema.safeParse(event.data);
        if (parsed.success) {
          const verb = parsed.data.decision === 'allow' ? 'allowed' : 'denied';
          add(
            event.seq,
            `#${event.seq} ${who} ${verb} tool call ${parsed.data.toolCallId}${parsed.data.reason ? ` (${parsed.data.reason})` : ''}`,
          );
        }
        break;
      }
      case 'tool_call_result': {
        const parsed = ToolCallResultDataSchema.safeParse(event.data);
        if (parsed.success)
          add(
            event.seq,
            `#${event.seq} ${who} answered tool call ${parsed.data.toolCallId}${parsed.data.isError ? ' with an error' : ''}: ${json(parsed.data.output)}`,
          );
        break;
      }
      case 'participant_added':
      case 'participant_removed': {
        const parsed = ParticipantChangeDataSchema.safeParse(event.data);
        if (!parsed.success) break;
        const { principalId, role, by } = parsed.data;
        const what = known === 'participant_added' ? `joined as ${role}` : 'left';
        add(event.seq, `#${event.seq} ${principalId} ${what}${by !== principalId ? ` (by ${by})` : ''}`);
        break;
      }
      case 'artifact_updated': {
        const parsed = ArtifactUpdatedDataSchema.safeParse(event.data);
        if (parsed.success)
          add(
            event.seq,
            `#${event.seq} ${parsed.data.by} wrote artifact ${parsed.data.name} v${parsed.data.version} (${parsed.data.mediaType})`,
          );
        break;
      }
      default: {
        const unreachable: never = known;
        return unreachable;
      }
    }
  }
  return lines.map((line) => clip(line.text, MAX_TEXT_CHARS));
}
