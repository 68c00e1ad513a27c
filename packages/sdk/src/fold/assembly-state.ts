import type { ProviderMetadata, UIMessage, UIMessagePart } from './ui-message.js';

/** Where a part came from: the seq that added it, and the first seq that gave it text (text and reasoning). */
export interface PartSeqs {
  readonly added: number;
  readonly text?: number;
}

/** A tool call whose input is still streaming (`tool-input-start`, then `tool-input-delta`s). */
export interface PartialToolCall {
  readonly text: string;
  readonly toolName: string;
  readonly dynamic: boolean;
  readonly inputEncoding?: 'json' | 'text';
  readonly title?: string;
  readonly toolMetadata?: Readonly<Record<string, unknown>>;
}

/**
 * One run's message as its chunks are applied: the message itself, and what `ai`'s stream
 * processor keeps beside it (the open text and reasoning blocks by chunk id, the tool inputs
 * still streaming), so the next chunk lands where `readUIMessageStream` would put it.
 */
export interface MessageAssembly {
  readonly message: UIMessage;
  /** Beside `message.parts`, one entry per part. */
  readonly partSeqs: readonly PartSeqs[];
  /** Open text blocks: chunk id → index in `message.parts`. */
  readonly activeText: Readonly<Record<string, number>>;
  readonly activeReasoning: Readonly<Record<string, number>>;
  readonly partialToolCalls: Readonly<Record<string, PartialToolCall>>;
  readonly finishReason?: string;
  /** `error` chunks: the stream said something went wrong (no part; `ai` hands them to `onError`). */
  readonly chunkErrors: ReadonlyArray<{ readonly seq: number; readonly errorText: string }>;
}

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

export function emptyAssembly(messageId: string): MessageAssembly {
  return {
    message: { id: messageId, role: 'assistant', metadata: undefined, parts: [] },
    partSeqs: [],
    activeText: EMPTY,
    activeReasoning: EMPTY,
    partialToolCalls: EMPTY,
    chunkErrors: [],
  };
}

/** A record's own entry: never one inherited from Object.prototype (a key may be any string). */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

export function withEntry<T>(record: Readonly<Record<string, T>>, key: string, value: T): Readonly<Record<string, T>> {
  return { ...record, [key]: value };
}

export function withoutEntry<T>(record: Readonly<Record<string, T>>, key: string): Readonly<Record<string, T>> {
  if (!Object.hasOwn(record, key)) return record;
  const { [key]: _gone, ...rest } = record;
  return rest;
}

export function pushPart<A extends MessageAssembly>(assembly: A, part: UIMessagePart, seqs: PartSeqs): A {
  const { message } = assembly;
  return {
    ...assembly,
    message: { id: message.id, role: message.role, metadata: message.metadata, parts: [...message.parts, part] },
    partSeqs: [...assembly.partSeqs, seqs],
  };
}

/** The message with part `index` replaced: every other part stays the same object. */
export function replacePart<A extends MessageAssembly>(assembly: A, index: number, part: UIMessagePart): A {
  const { message } = assembly;
  const parts = message.parts.slice();
  parts[index] = part;
  return { ...assembly, message: { id: message.id, role: message.role, metadata: message.metadata, parts } };
}

/** Index of the first part of the current step (after the last `step-start`). */
export function currentStepStart(parts: readonly UIMessagePart[]): number {
  for (let i = parts.length - 1; i >= 0; i--) if (parts[i]!.type === 'step-start') return i + 1;
  return 0;
}

/** Copies `fields` without its undefined entries, so a part holds only what it has. */
export function defined<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {};
  for (const key in fields) if (fields[key] !== undefined) out[key] = fields[key];
  // Same keys as `fields`, less the undefined ones: still a T.
  return out as T;
}

export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Provider metadata as a chunk carries it (an object of objects), or nothing when it is not that. */
export function providerMetadataOf(value: unknown): ProviderMetadata | undefined {
  return isProviderMetadata(value) ? value : undefined;
}

function isProviderMetadata(value: unknown): value is ProviderMetadata {
  return isRecord(value) && Object.values(value).every(isRecord);
}

export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function booleanOf(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** A text or reasoning block still open (started, not ended): where it is and which chunk id continues it. */
export interface OpenBlock {
  readonly kind: 'text' | 'reasoning';
  readonly chunkId: string;
  readonly index: number;
}

/** The blocks of a message still open, in the order they were opened. */
export function openBlocks(assembly: MessageAssembly): OpenBlock[] {
  const blocks: OpenBlock[] = [];
  for (const [chunkId, index] of Object.entries(assembly.activeText)) blocks.push({ kind: 'text', chunkId, index });
  for (const [chunkId, index] of Object.entries(assembly.activeReasoning))
    blocks.push({ kind: 'reasoning', chunkId, index });
  return blocks.sort((a, b) => a.index - b.index);
}

/** The part index of the open block a delta or end with this chunk id continues, if one is open. */
export function openBlockIndex(
  assembly: MessageAssembly,
  kind: 'text' | 'reasoning',
  chunkId: string,
): number | undefined {
  return own(kind === 'text' ? assembly.activeText : assembly.activeReasoning, chunkId);
}
