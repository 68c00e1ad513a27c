export { buildChildEnv, credentialFromEnv, CREDENTIAL_ENV_VARS, DEFAULT_MAX_RETRIES } from './child-env.js';
export type { ChildEnvOptions, EngineCredential } from './child-env.js';
export { AsyncQueue } from './async-queue.js';
export { PromptStream, userMessage } from './prompt-stream.js';
export type { UserContent, UserMessageOptions } from './prompt-stream.js';
export { liveQueryFrom, startLiveQuery } from './live-query.js';
export type { LiveQuery, LiveQueryEnd, LiveQueryEndReason, LiveQueryOptions } from './live-query.js';
export { RunQueue } from './run-queue.js';
export type { Release, RunQueueOptions, RunQueueSnapshot, RunTicket } from './run-queue.js';
export { SpareEngine } from './spare-engine.js';
export type {
  FlagSettings,
  SpareEngineOptions,
  SparePlan,
  SpareRequest,
  SpareServed,
  SpareSetup,
} from './spare-engine.js';
export { classifyEngineError, findResetAt } from './classify-engine-error.js';
export type { ResetSources } from './classify-engine-error.js';
export type {
  ClassifyInput,
  EngineErrorClassification,
  EngineErrorKind,
  ResultInput,
} from './classify-engine-error.js';
export { EngineError, ENGINE_ERROR_CODES, isEngineError } from './engine-error.js';
export type { EngineErrorCode } from './engine-error.js';
export {
  assertNever,
  narrowSdkMessage,
  SDK_MESSAGE_TYPES,
  SDK_SYSTEM_SUBTYPES,
} from './sdk-message.js';
export type {
  ApiRetryLike,
  AssistantLike,
  BackgroundTasksChangedLike,
  CommandLifecycleLike,
  ContentBlockLike,
  IgnoredSdkVariant,
  NarrowedKind,
  NarrowedSdkMessage,
  PermissionDeniedLike,
  RateLimitEventLike,
  ResultLike,
  SdkMessageLike,
  StreamEventLike,
  SystemInitLike,
  SystemStatusLike,
  TaskNotificationLike,
  TaskProgressLike,
  TaskStartedLike,
  TaskUpdatedLike,
  UserLike,
} from './sdk-message.js';
export {
  isInside,
  isolationOptions,
  isolationSettings,
  privatePathTouched,
  spareIsolationGap,
  spareIsolationOptions,
  SYSTEM_READ_PATHS,
  SYSTEM_SECRET_PATHS,
  toolchainReadPaths,
} from './tool-sandbox.js';
export type { IsolationOptions, ToolIsolation } from './tool-sandbox.js';
export { probeSandbox } from './probe-sandbox.js';
export type { SandboxProbe } from './probe-sandbox.js';
export { resolveSecret, Secret, SecretRefSchema } from './secret.js';
export type { SecretRef, SecretResolution, SecretSources } from './secret.js';
export { describeIssues, formatPath, unknownKeys, valueAt } from './describe-issues.js';
export { configPathFromArgv, configResolver, describeConfigProblems, readConfigJson } from './config-file.js';
export type { ConfigJson } from './config-file.js';
export { renderConfigReference, type ConfigReferenceOptions } from './config-reference.js';
export {
  isEnvFileName,
  makePrivateDatabase,
  makePrivateDir,
  readableByOthers,
  secretFileModes,
  type FileMode,
} from './private-files.js';
