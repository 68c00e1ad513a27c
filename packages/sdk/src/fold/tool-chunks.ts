import { assertNever, type KnownUiChunk } from '@bubble/protocol';
import {
  booleanOf,
  currentStepStart,
  defined,
  isRecord,
  type MessageAssembly,
  own,
  type PartialToolCall,
  providerMetadataOf,
  pushPart,
  replacePart,
  stringOf,
  withEntry,
} from './assembly-state.js';
import { parsePartialJson } from './partial-json.js';
import {
  isToolUIPart,
  type ProviderMetadata,
  type ToolPartState,
  type ToolUIPart,
  toolNameOf,
  type UIMessagePart,
} from './ui-message.js';

export type ToolChunk = Extract<
  KnownUiChunk,
  {
    type:
      | 'tool-input-start'
      | 'tool-input-delta'
      | 'tool-input-available'
      | 'tool-input-error'
      | 'tool-approval-request'
      | 'tool-output-available'
      | 'tool-output-error'
      | 'tool-output-denied';
  }
>;

/** What one chunk sets on a tool part; anything left out of an update is taken from the part as it was. */
interface ToolUpdate {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly state: ToolPartState;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly errorText?: string;
  readonly rawInput?: unknown;
  readonly inputEncoding?: 'json' | 'text';
  readonly preliminary?: boolean;
  readonly providerExecuted?: boolean;
  readonly title?: string;
  readonly toolMetadata?: Readonly<Record<string, unknown>>;
  readonly providerMetadata?: ProviderMetadata;
}

/**
 * Applies a `tool-*` chunk the way `ai`'s `processUIMessageStream` does: a call's input streams
 * (`input-streaming`), becomes available, may be parked for approval (`approval-requested`), and
 * ends with an output, an error or a denial. Where `ai` throws (an output or a request for a call
 * this message does not have, a delta for an input that never started), the chunk changes
 * nothing: a sub-agent's request, for one, is carried by a run that has no part for its call.
 */
export function applyToolChunk<A extends MessageAssembly>(assembly: A, chunk: ToolChunk, seq: number): A {
  switch (chunk.type) {
    case 'tool-input-start': {
      const inputEncoding = encodingOf(chunk.inputEncoding);
      const partial: PartialToolCall = defined({
        text: '',
        toolName: chunk.toolName,
        dynamic: chunk.dynamic === true,
        inputEncoding,
        title: stringOf(chunk.title),
        toolMetadata: recordOf(chunk.toolMetadata),
      });
      const started = {
        ...assembly,
        partialToolCalls: withEntry(assembly.partialToolCalls, chunk.toolCallId, partial),
      };
      return updateTool(started, partial.dynamic, seq, {
        toolCallId: chunk.toolCallId,
        toolName: chunk.toolName,
        state: 'input-streaming',
        inputEncoding,
        providerExecuted: chunk.providerExecuted,
        title: partial.title,
        toolMetadata: partial.toolMetadata,
        providerMetadata: providerMetadataOf(chunk.providerMetadata),
      });
    }
    case 'tool-input-delta': {
      const partial = own(assembly.partialToolCalls, chunk.toolCallId);
      if (partial === undefined) return assembly;
      const grown: PartialToolCall = { ...partial, text: partial.text + chunk.inputTextDelta };
      const withText = { ...assembly, partialToolCalls: withEntry(assembly.partialToolCalls, chunk.toolCallId, grown) };
      return updateTool(withText, grown.dynamic, seq, {
        toolCallId: chunk.toolCallId,
        toolName: grown.toolName,
        state: 'input-streaming',
        inputEncoding: grown.inputEncoding,
        input: grown.inputEncoding === 'text' ? grown.text : parsePartialJson(grown.text),
        rawInput: grown.text,
        title: grown.title,
        toolMetadata: grown.toolMetadata,
      });
    }
    case 'tool-input-available':
      return updateTool(assembly, chunk.dynamic === true, seq, {
        toolCallId: chunk.toolCallId,
        toolName: chunk.toolName,
        state: 'input-available',
        input: chunk.input,
        providerExecuted: chunk.providerExecuted,
        providerMetadata: providerMetadataOf(chunk.providerMetadata),
        title: stringOf(chunk.title),
        toolMetadata: recordOf(chunk.toolMetadata),
      });
    case 'tool-input-error': {
      const parts = assembly.message.parts;
      const existing = parts
        .slice(currentStepStart(parts))
        .find((p) => isToolUIPart(p) && p.toolCallId === chunk.toolCallId);
      const dynamic = existing !== undefined ? existing.type === 'dynamic-tool' : chunk.dynamic === true;
      return updateTool(assembly, dynamic, seq, {
        toolCallId: chunk.toolCallId,
        toolName: chunk.toolName,
        state: 'output-error',
        // A dynamic part keeps the refused input as its input; a static one, as raw input.
        ...(dynamic ? { input: chunk.input } : { rawInput: chunk.input }),
        errorText: chunk.errorText,
        providerExecuted: booleanOf(chunk.providerExecuted),
        providerMetadata: providerMetadataOf(chunk.providerMetadata),
        toolMetadata: recordOf(chunk.toolMetadata),
      });
    }
    case 'tool-approval-request':
      return patchInvocation(assembly, chunk.toolCallId, (part) => ({
        ...part,
        state: 'approval-requested',
        approval: defined({
          id: chunk.approvalId,
          descriptor: chunk.approvalDescriptor ?? undefined,
          signature: stringOf(chunk.signature),
          ...(Object.hasOwn(chunk, 'inputSchemaInput') ? { inputSchemaInput: chunk.inputSchemaInput } : {}),
        }),
      }));
    case 'tool-output-denied':
      return patchInvocation(assembly, chunk.toolCallId, (part) => ({ ...part, state: 'output-denied' }));
    case 'tool-output-available':
    case 'tool-output-error': {
      const found = findInvocation(assembly.message.parts, chunk.toolCallId);
      if (found === undefined) return assembly;
      const { part } = found;
      const dynamic = part.type === 'dynamic-tool';
      const common = {
        toolCallId: chunk.toolCallId,
        toolName: toolNameOf(part),
        input: part.input,
        providerExecuted: booleanOf(chunk.providerExecuted),
        providerMetadata: providerMetadataOf(chunk.providerMetadata),
        title: part.title,
        toolMetadata: recordOf(chunk.toolMetadata) ?? part.toolMetadata,
      };
      const update: ToolUpdate =
        chunk.type === 'tool-output-available'
          ? { ...common, state: 'output-available', output: chunk.output, preliminary: chunk.preliminary }
          : {
              ...common,
              state: 'output-error',
              errorText: chunk.errorText,
              ...(dynamic ? {} : { rawInput: part.rawInput }),
            };
      return updateTool(assembly, dynamic, seq, update, found);
    }
    default:
      return assertNever(chunk, 'tool chunk');
  }
}

/**
 * Sets a tool part from an update: the part named by `index`, else the call's part in the
 * current step, else a new part. As in `ai`, an update replaces input, output, error and
 * raw input, and keeps the title, tool metadata, provider flags and approval it does not name.
 */
function updateTool<A extends MessageAssembly>(
  assembly: A,
  dynamic: boolean,
  seq: number,
  update: ToolUpdate,
  existing: FoundPart | undefined = undefined,
): A {
  const at = existing ?? findInCurrentStep(assembly.message.parts, update.toolCallId, dynamic);
  const result = update.state === 'output-available' || update.state === 'output-error';
  const metadata = update.providerMetadata;
  const head = dynamic
    ? ({ type: 'dynamic-tool', toolName: update.toolName } as const)
    : ({ type: `tool-${update.toolName}` } as const);
  const changed = {
    toolCallId: update.toolCallId,
    state: update.state,
    input: update.input,
    output: update.output,
    errorText: update.errorText,
    rawInput: update.rawInput,
    inputEncoding: update.inputEncoding,
    preliminary: update.preliminary,
  };
  if (at === undefined) {
    const part: ToolUIPart = defined({
      ...head,
      ...changed,
      // `ai` gives a new dynamic part no raw input.
      rawInput: dynamic ? undefined : update.rawInput,
      title: update.title,
      toolMetadata: update.toolMetadata,
      providerExecuted: update.providerExecuted,
      callProviderMetadata: result ? undefined : metadata,
      resultProviderMetadata: result ? metadata : undefined,
    });
    return pushPart(assembly, part, { added: seq });
  }
  const previous = at.part;
  const part: ToolUIPart = defined({
    ...head,
    ...changed,
    title: update.title ?? previous.title,
    toolMetadata: update.toolMetadata ?? previous.toolMetadata,
    providerExecuted: update.providerExecuted ?? previous.providerExecuted,
    callProviderMetadata: metadata !== undefined && !result ? metadata : previous.callProviderMetadata,
    resultProviderMetadata: metadata !== undefined && result ? metadata : previous.resultProviderMetadata,
    approval: previous.approval,
  });
  return replacePart(assembly, at.index, part);
}

interface FoundPart {
  readonly index: number;
  readonly part: ToolUIPart;
}

function toolPartAt(parts: readonly UIMessagePart[], index: number, toolCallId: string): FoundPart | undefined {
  const part = parts[index];
  return part !== undefined && isToolUIPart(part) && part.toolCallId === toolCallId ? { index, part } : undefined;
}

function findInCurrentStep(
  parts: readonly UIMessagePart[],
  toolCallId: string,
  dynamic: boolean,
): FoundPart | undefined {
  for (let i = currentStepStart(parts); i < parts.length; i++) {
    const found = toolPartAt(parts, i, toolCallId);
    if (found !== undefined && (found.part.type === 'dynamic-tool') === dynamic) return found;
  }
  return undefined;
}

/** The call's part: in the current step first, else the latest anywhere in the message (as `ai` looks it up). */
function findInvocation(parts: readonly UIMessagePart[], toolCallId: string): FoundPart | undefined {
  for (let i = currentStepStart(parts); i < parts.length; i++) {
    const found = toolPartAt(parts, i, toolCallId);
    if (found !== undefined) return found;
  }
  for (let i = parts.length - 1; i >= 0; i--) {
    const found = toolPartAt(parts, i, toolCallId);
    if (found !== undefined) return found;
  }
  return undefined;
}

function patchInvocation<A extends MessageAssembly>(
  assembly: A,
  toolCallId: string,
  patch: (part: ToolUIPart) => ToolUIPart,
): A {
  const found = findInvocation(assembly.message.parts, toolCallId);
  return found === undefined ? assembly : replacePart(assembly, found.index, patch(found.part));
}

function encodingOf(value: unknown): 'json' | 'text' | undefined {
  return value === 'json' || value === 'text' ? value : undefined;
}

function recordOf(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return isRecord(value) ? value : undefined;
}
