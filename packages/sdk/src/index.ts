export {
  BubbleClient,
  type AddParticipantResult,
  type BubbleClientOptions,
  type CallOptions,
  type CreateThreadInput,
  type CreateInviteInput,
  type ReadEventsInput,
  type PutArtifactInput,
} from './client/bubble-client.js';
export {
  CredentialsUnavailable,
  isCredentialsUnavailable,
  isProviderUnreachableMessage,
  staticCredentials,
  type Credentials,
} from './client/credentials.js';
export { inviteLink, inviteTokenFromLocation, INVITE_PATH, INVITE_TOKEN_PATTERN } from './client/invite-link.js';
export {
  BubbleApiError,
  isBubbleApiError,
  errorFromResponse,
  type BubbleErrorCode,
  type BubbleApiErrorInit,
} from './client/bubble-api-error.js';
export { DEFAULT_RETRY, type RetryOptions } from './client/http-transport.js';
export {
  mayRetry,
  isRetryableErrorCode,
  isPermanentFailure,
  classifyClose,
  type RetryMode,
  type CloseVerdict,
} from './client/retry-classification.js';
export { fullJitterDelay, equalJitterDelay, exponentialCeiling, type BackoffOptions } from './client/backoff.js';
export { newClientEventId, withClientEventIds } from './client/client-event-id.js';
export {
  BubbleLive,
  deriveWsUrl,
  type BubbleLiveOptions,
  type BubbleLiveConfig,
  type LiveState,
} from './live/bubble-live.js';
export {
  ThreadSubscription,
  GrantsSubscription,
  type SubscriptionEndReason,
  type AnyLiveSubscription,
  type PresenceListener,
  type SubscribeThreadOptions,
} from './live/live-subscription.js';
export { diffGrants, sameGrant, type GrantUpdate } from './live/grants-diff.js';
export type {
  WebSocketFactory,
  WebSocketLike,
  WebSocketListener,
  WebSocketFlowControl,
  WebSocketOpenOptions,
} from './live/web-socket-like.js';
// The browser adapter is exported by `@bubble/sdk/client` only: Node code gets `ws`'s.
export { nodeWebSocket } from './live/ws-node.js';
export {
  extractDrainPayload,
  formatDrainText,
  runKey,
  type DrainOptions,
  type DrainPart,
  type DrainFile,
  type DrainPayload,
} from './drain/extract-drain-payload.js';
export {
  jsonOneLine,
  promptBlocks,
  quoteSpeaker,
  speakerLabel,
  type PromptTextBlock,
  type SpokenPart,
} from './drain/quote-speakers.js';
export { DrainBuffer } from './drain/drain-buffer.js';
export {
  selectReplayWindow,
  BacklogPolicySchema,
  DEFAULT_BACKLOG_POLICY,
  type BacklogPolicy,
  type BacklogPolicyInput,
  type ReplayWindowInput,
  type ReplayWindowDecision,
  type ReplayRule,
} from './runtime/replay-window.js';
export { resolveReplayStart, type ReplayStart, type ReplayReader } from './runtime/resolve-replay-start.js';
export {
  MemoryCheckpointStore,
  SqliteCheckpointStore,
  type CheckpointStore,
  type SqliteCheckpointStoreOptions,
} from './runtime/checkpoint-store.js';
export { startBotRuntime, type BotRuntime, type BotRuntimeOptions, type BotRuntimeEnd } from './runtime/bot-runtime.js';
export {
  ThreadRunner,
  type ThreadContext,
  type ThreadHandler,
  type ThreadHandlerFactory,
  type ThreadStopReason,
  type BotRuntimeClient,
  type BotRuntimeLive,
} from './runtime/thread-runner.js';
export {
  defineTool,
  runTool,
  ToolError,
  type LocalTool,
  type ToolContext,
  type ToolClient,
  type ToolOutcome,
  type JsonValue,
} from './tools/local-tool.js';
export { buildToolCatalog, toolCatalog, CORE_TOOLS, type ToolCatalog } from './tools/tool-catalog.js';
export { threadIdInput, threadInScope, threadOutOfScope, outOfScopeMessage } from './tools/thread-scope.js';
export { artifactsManifestMatches } from './tools/artifacts-manifest.js';
export { ARTIFACT_TOOLS, listArtifactsTool, readArtifactTool, writeArtifactTool } from './tools/artifact-tools.js';
export { browseThreadTool } from './tools/browse-thread.js';
export { openSubthreadTool, subthreadKey } from './tools/open-subthread.js';
export { searchPrincipalsTool } from './tools/search-principals.js';
export { inviteToThreadTool } from './tools/invite-to-thread.js';
export { renderTranscript } from './tools/render-transcript.js';
export * from './fold/index.js';
