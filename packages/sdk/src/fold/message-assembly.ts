import type { DataUiChunk, UiChunk } from '@bubble/protocol';
import {
  emptyAssembly,
  isRecord,
  type MessageAssembly,
  own,
  providerMetadataOf,
  pushPart,
  replacePart,
  withEntry,
  withoutEntry,
} from './assembly-state.js';
import { applyToolChunk } from './tool-chunks.js';
import type { ReasoningUIPart, TextUIPart } from './ui-message.js';

export {
  emptyAssembly,
  type MessageAssembly,
  type OpenBlock,
  openBlockIndex,
  openBlocks,
  type PartSeqs,
} from './assembly-state.js';

/**
 * Applies one chunk of the AI SDK's UI message stream to a run's message, as `ai`'s
 * `readUIMessageStream` would (text and reasoning deltas joined into their block, tool parts
 * through their states, data parts replaced by id, step boundaries, metadata merged), but pure:
 * the assembly given is never changed, and a part the chunk does not touch stays the same object.
 *
 * Where `ai` throws and ends the stream, this is lenient, since a reader may start mid-message
 * (`bubble tail --after`, a page of `browse_thread`): a delta whose block never started is a
 * block of its own, complete as it lands; an end without a start, or an output for a call the
 * message does not have, changes nothing.
 */
export function applyChunk<A extends MessageAssembly>(assembly: A, chunk: UiChunk, seq: number): A {
  switch (chunk.type) {
    case 'text-start':
    case 'reasoning-start': {
      const text = chunk.type === 'text-start';
      const providerMetadata = providerMetadataOf(chunk.providerMetadata);
      const part: TextUIPart | ReasoningUIPart = text
        ? { type: 'text', text: '', state: 'streaming', ...(providerMetadata ? { providerMetadata } : {}) }
        : {
            type: 'reasoning',
            id: chunk.id,
            text: '',
            state: 'streaming',
            ...(providerMetadata ? { providerMetadata } : {}),
          };
      const index = assembly.message.parts.length;
      const pushed = pushPart(assembly, part, { added: seq });
      return text
        ? { ...pushed, activeText: withEntry(assembly.activeText, chunk.id, index) }
        : { ...pushed, activeReasoning: withEntry(assembly.activeReasoning, chunk.id, index) };
    }
    case 'text-delta':
    case 'reasoning-delta': {
      const text = chunk.type === 'text-delta';
      const providerMetadata = providerMetadataOf(chunk.providerMetadata);
      const index = own(text ? assembly.activeText : assembly.activeReasoning, chunk.id);
      const part = index === undefined ? undefined : assembly.message.parts[index];
      if (index === undefined || part === undefined || (part.type !== 'text' && part.type !== 'reasoning')) {
        const orphan: TextUIPart | ReasoningUIPart = text
          ? { type: 'text', text: chunk.delta, state: 'done', ...(providerMetadata ? { providerMetadata } : {}) }
          : {
              type: 'reasoning',
              id: chunk.id,
              text: chunk.delta,
              state: 'done',
              ...(providerMetadata ? { providerMetadata } : {}),
            };
        return pushPart(assembly, orphan, { added: seq, text: seq });
      }
      // The hot path of a streaming message: one new part, the rest shared.
      const joined = part.text + chunk.delta;
      const grown = providerMetadata ? { ...part, text: joined, providerMetadata } : { ...part, text: joined };
      const seqs = assembly.partSeqs[index]!;
      if (seqs.text !== undefined) return replacePart(assembly, index, grown);
      const partSeqs = assembly.partSeqs.slice();
      partSeqs[index] = { added: seqs.added, text: seq };
      return { ...replacePart(assembly, index, grown), partSeqs };
    }
    case 'text-end':
    case 'reasoning-end': {
      const text = chunk.type === 'text-end';
      const blocks = text ? assembly.activeText : assembly.activeReasoning;
      const index = own(blocks, chunk.id);
      const part = index === undefined ? undefined : assembly.message.parts[index];
      if (index === undefined || part === undefined || (part.type !== 'text' && part.type !== 'reasoning'))
        return assembly;
      const providerMetadata = providerMetadataOf(chunk.providerMetadata);
      const done = { ...part, state: 'done' as const, ...(providerMetadata ? { providerMetadata } : {}) };
      const closed = withoutEntry(blocks, chunk.id);
      const replaced = replacePart(assembly, index, done);
      return text ? { ...replaced, activeText: closed } : { ...replaced, activeReasoning: closed };
    }
    case 'file': {
      const providerMetadata = providerMetadataOf(chunk.providerMetadata);
      const part = { type: 'file', mediaType: chunk.mediaType, url: chunk.url } as const;
      return pushPart(assembly, providerMetadata ? { ...part, providerMetadata } : part, { added: seq });
    }
    case 'source-url': {
      const providerMetadata = providerMetadataOf(chunk.providerMetadata);
      const part = {
        type: 'source-url',
        sourceId: chunk.sourceId,
        url: chunk.url,
        ...(chunk.title !== undefined ? { title: chunk.title } : {}),
        ...(providerMetadata ? { providerMetadata } : {}),
      } as const;
      return pushPart(assembly, part, { added: seq });
    }
    case 'source-document': {
      const providerMetadata = providerMetadataOf(chunk.providerMetadata);
      const part = {
        type: 'source-document',
        sourceId: chunk.sourceId,
        mediaType: chunk.mediaType,
        title: chunk.title,
        ...(chunk.filename !== undefined ? { filename: chunk.filename } : {}),
        ...(providerMetadata ? { providerMetadata } : {}),
      } as const;
      return pushPart(assembly, part, { added: seq });
    }
    case 'tool-input-start':
    case 'tool-input-delta':
    case 'tool-input-available':
    case 'tool-input-error':
    case 'tool-approval-request':
    case 'tool-output-available':
    case 'tool-output-error':
    case 'tool-output-denied':
      return applyToolChunk(assembly, chunk, seq);
    case 'start-step':
      return pushPart(assembly, { type: 'step-start' }, { added: seq });
    case 'finish-step':
      // A new step opens new blocks: ids of the last one no longer continue anything.
      return { ...assembly, activeText: {}, activeReasoning: {} };
    case 'start': {
      const { messageId } = chunk;
      // As `readUIMessageStream` does: another message id starts the message over.
      const base =
        messageId !== undefined && messageId !== assembly.message.id
          ? { ...assembly, ...emptyAssembly(messageId), chunkErrors: assembly.chunkErrors }
          : assembly;
      return withMetadata(base, chunk.messageMetadata);
    }
    case 'finish': {
      const finished = chunk.finishReason !== undefined ? { ...assembly, finishReason: chunk.finishReason } : assembly;
      return withMetadata(finished, chunk.messageMetadata);
    }
    case 'message-metadata':
      return withMetadata(assembly, chunk.messageMetadata);
    case 'error':
      return { ...assembly, chunkErrors: [...assembly.chunkErrors, { seq, errorText: chunk.errorText }] };
    case 'abort':
      return assembly;
    default:
      return applyDataChunk(assembly, chunk, seq);
  }
}

/** `data-*` chunks: a transient one is not kept; one with an id replaces the data of its part. */
function applyDataChunk<A extends MessageAssembly>(assembly: A, chunk: DataUiChunk, seq: number): A {
  if (chunk.transient === true) return assembly;
  const parts = assembly.message.parts;
  if (chunk.id !== undefined) {
    const index = parts.findIndex((part) => part.type === chunk.type && 'id' in part && part.id === chunk.id);
    const part = parts[index];
    if (part !== undefined && 'data' in part) return replacePart(assembly, index, { ...part, data: chunk.data });
  }
  return pushPart(assembly, { ...chunk }, { added: seq });
}

function withMetadata<A extends MessageAssembly>(assembly: A, metadata: unknown): A {
  if (metadata == null) return assembly;
  const merged = mergeMetadata(assembly.message.metadata, metadata);
  return { ...assembly, message: { ...assembly.message, metadata: merged } };
}

/** `ai`'s deep merge of message metadata: objects merge key by key, anything else replaces. */
function mergeMetadata(base: unknown, overrides: unknown): unknown {
  if (base === undefined) return overrides;
  if (!isRecord(base) || !isRecord(overrides)) return overrides === undefined ? base : overrides;
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined || key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    result[key] = isRecord(value) && isRecord(result[key]) ? mergeMetadata(result[key], value) : value;
  }
  return result;
}
