/**
 * The Vercel AI SDK's `UIMessage` (`ai` package, v6), written out structurally: the sdk does not
 * depend on `ai`, but a message the fold assembles has exactly the shape `readUIMessageStream`
 * yields (the web package's tests compare the two on every recorded thread), so a UI built for
 * `ai` renders it as it is. Everything is read-only: the fold shares unchanged parts between
 * states, so nothing may be mutated in place.
 */
export type ProviderMetadata = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export interface TextUIPart {
  readonly type: 'text';
  readonly text: string;
  readonly state?: 'streaming' | 'done';
  readonly providerMetadata?: ProviderMetadata;
}

export interface ReasoningUIPart {
  readonly type: 'reasoning';
  readonly id?: string;
  readonly text: string;
  readonly state?: 'streaming' | 'done';
  readonly providerMetadata?: ProviderMetadata;
}

export type ToolPartState =
  | 'input-streaming'
  | 'input-available'
  | 'approval-requested'
  | 'approval-responded'
  | 'output-available'
  | 'output-error'
  | 'output-denied';

/** Set by a `tool-approval-request` chunk; `approved` (and `reason`) once an answer that counts arrives. */
export interface ToolApproval {
  readonly id: string;
  readonly approved?: boolean;
  readonly reason?: string;
  readonly descriptor?: unknown;
  readonly signature?: string;
  readonly inputSchemaInput?: unknown;
}

interface ToolInvocationFields {
  readonly toolCallId: string;
  readonly state: ToolPartState;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly errorText?: string;
  /** The streamed input text (`tool-input-delta`), or the input a `tool-input-error` refused. */
  readonly rawInput?: unknown;
  readonly inputEncoding?: 'json' | 'text';
  readonly providerExecuted?: boolean;
  readonly preliminary?: boolean;
  readonly title?: string;
  readonly toolMetadata?: Readonly<Record<string, unknown>>;
  readonly callProviderMetadata?: ProviderMetadata;
  readonly resultProviderMetadata?: ProviderMetadata;
  readonly approval?: ToolApproval;
}

/** A call of a tool known by name: `tool-Bash`. */
export interface StaticToolUIPart extends ToolInvocationFields {
  readonly type: `tool-${string}`;
}

/** A call of a tool the stream marked `dynamic` (its name is a field). */
export interface DynamicToolUIPart extends ToolInvocationFields {
  readonly type: 'dynamic-tool';
  readonly toolName: string;
}

export type ToolUIPart = StaticToolUIPart | DynamicToolUIPart;

export interface SourceUrlUIPart {
  readonly type: 'source-url';
  readonly sourceId: string;
  readonly url: string;
  readonly title?: string;
  readonly providerMetadata?: ProviderMetadata;
}

export interface SourceDocumentUIPart {
  readonly type: 'source-document';
  readonly sourceId: string;
  readonly mediaType: string;
  readonly title: string;
  readonly filename?: string;
  readonly providerMetadata?: ProviderMetadata;
}

export interface FileUIPart {
  readonly type: 'file';
  readonly mediaType: string;
  readonly url: string;
  readonly filename?: string;
  readonly providerMetadata?: ProviderMetadata;
}

export interface StepStartUIPart {
  readonly type: 'step-start';
}

export interface DataUIPart {
  readonly type: `data-${string}`;
  readonly id?: string;
  readonly data: unknown;
}

export type UIMessagePart =
  | TextUIPart
  | ReasoningUIPart
  | ToolUIPart
  | SourceUrlUIPart
  | SourceDocumentUIPart
  | FileUIPart
  | StepStartUIPart
  | DataUIPart;

export interface UIMessage {
  readonly id: string;
  readonly role: 'system' | 'user' | 'assistant';
  readonly metadata?: unknown;
  readonly parts: readonly UIMessagePart[];
}

export function isToolUIPart(part: UIMessagePart): part is ToolUIPart {
  return part.type === 'dynamic-tool' || part.type.startsWith('tool-');
}

/** A tool part's tool name, from its field (dynamic) or its type (`tool-Bash`). */
export function toolNameOf(part: ToolUIPart): string {
  return part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
}
