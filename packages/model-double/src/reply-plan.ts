import { assertNever } from '@bubble/protocol';
import { estimateTokens } from './request-info.js';
import type { ReplyBlock, StopReason, UsageOverride } from './script.js';

/**
 * Turns reply blocks into what the real Messages API would send: the full
 * Message (non-streaming) and the SSE events in the API's order (streaming).
 * Pure: ids are passed in.
 */

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason;
  stop_sequence: null;
  usage: Usage;
}

export interface SseEvent {
  /** The SSE `event:` name, equal to `data.type`. */
  event: string;
  data: Record<string, unknown>;
  /** Pause before sending this event. */
  delayMs: number;
}

export interface ReplyPlan {
  message: Message;
  events: SseEvent[];
}

export interface PlanOptions {
  messageId: string;
  model: string;
  inputTokens: number;
  /** Called for each tool_use block without an id. */
  newToolUseId: () => string;
  stopReason?: StopReason | undefined;
  usage?: UsageOverride | undefined;
}

export const DEFAULT_SIGNATURE = Buffer.from('model-double-signature').toString('base64');
const DEFAULT_TOOL_CHUNK = 24;

export function planReply(blocks: readonly ReplyBlock[], options: PlanOptions): ReplyPlan {
  const content: ContentBlock[] = [];
  const blockEvents: SseEvent[] = [];
  blocks.forEach((block, index) => {
    const { full, events } = planBlock(block, index, options);
    content.push(full);
    blockEvents.push(...events);
  });
  const stopReason = options.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const usage: Usage = {
    input_tokens: options.usage?.input_tokens ?? options.inputTokens,
    output_tokens: options.usage?.output_tokens ?? estimateTokens(content),
    cache_creation_input_tokens: options.usage?.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: options.usage?.cache_read_input_tokens ?? 0,
  };
  const message: Message = {
    id: options.messageId,
    type: 'message',
    role: 'assistant',
    model: options.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
  const events: SseEvent[] = [
    ev(
      {
        type: 'message_start',
        message: {
          ...message,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
      0,
    ),
    ev({ type: 'ping' }, 0),
    ...blockEvents,
    ev(
      {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      },
      0,
    ),
    ev({ type: 'message_stop' }, 0),
  ];
  return { message, events };
}

/** The events a streaming error rule sends after `message_start`: the API's mid-stream `error` event. */
export function midStreamErrorEvents(
  messageStart: SseEvent,
  error: { type: string; message: string },
  requestId: string,
): SseEvent[] {
  return [messageStart, ev({ type: 'ping' }, 0), ev({ type: 'error', error, request_id: requestId }, 0)];
}

function planBlock(block: ReplyBlock, index: number, options: PlanOptions): { full: ContentBlock; events: SseEvent[] } {
  const delay = block.delayMs ?? 0;
  switch (block.type) {
    case 'text': {
      const deltas = chunkText(block.text, block.chunkWords, block.chunkChars);
      return {
        full: { type: 'text', text: block.text },
        events: [
          ev({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 0),
          ...deltas.map((text) =>
            ev({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }, delay),
          ),
          ev({ type: 'content_block_stop', index }, 0),
        ],
      };
    }
    case 'thinking': {
      const signature = block.signature ?? DEFAULT_SIGNATURE;
      const deltas = chunkText(block.thinking, block.chunkWords, block.chunkChars);
      return {
        full: { type: 'thinking', thinking: block.thinking, signature },
        events: [
          ev(
            { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
            0,
          ),
          ...deltas.map((thinking) =>
            ev({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } }, delay),
          ),
          ev({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } }, 0),
          ev({ type: 'content_block_stop', index }, 0),
        ],
      };
    }
    case 'tool_use': {
      const id = block.id ?? options.newToolUseId();
      const json = JSON.stringify(block.input);
      // The real API opens with an empty partial_json, then streams the input in pieces.
      const pieces = ['', ...chunkChars(json, block.chunkChars ?? DEFAULT_TOOL_CHUNK)];
      return {
        full: { type: 'tool_use', id, name: block.name, input: block.input },
        events: [
          ev(
            {
              type: 'content_block_start',
              index,
              content_block: { type: 'tool_use', id, name: block.name, input: {} },
            },
            0,
          ),
          ...pieces.map((partial_json, i) =>
            ev(
              { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
              i === 0 ? 0 : delay,
            ),
          ),
          ev({ type: 'content_block_stop', index }, 0),
        ],
      };
    }
    default:
      return assertNever(block, 'reply block');
  }
}

/** Splits text into deltas of `words` words (default 1) or `chars` characters; joined they give the text back. */
export function chunkText(text: string, words?: number, chars?: number): string[] {
  if (text === '') return [];
  if (chars !== undefined) return chunkChars(text, chars);
  const perDelta = words ?? 1;
  const pieces = text.split(/(?<=\s)(?=\S)/);
  // Leading whitespace rides with the first word.
  if (pieces.length > 1 && pieces[0]!.trim() === '') pieces.splice(0, 2, pieces[0]! + pieces[1]!);
  const deltas: string[] = [];
  for (let i = 0; i < pieces.length; i += perDelta) deltas.push(pieces.slice(i, i + perDelta).join(''));
  return deltas;
}

function chunkChars(text: string, size: number): string[] {
  const chars = Array.from(text); // never split a surrogate pair
  const deltas: string[] = [];
  for (let i = 0; i < chars.length; i += size) deltas.push(chars.slice(i, i + size).join(''));
  return deltas;
}

function ev(data: Record<string, unknown> & { type: string }, delayMs: number): SseEvent {
  return { event: data.type, data, delayMs };
}
