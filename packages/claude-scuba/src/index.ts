export { ScubaError, SCUBA_ERROR_CODES, isScubaError } from './errors.js';
export type { ScubaErrorCode } from './errors.js';
export { Secret, SecretRefSchema, resolveSecret } from '@bubble/engine';
export type { SecretRef, SecretSources } from '@bubble/engine';
export {
  ScubaConfigFileSchema,
  PERMISSION_MODES,
  RESPOND_TO,
  ON_FIRST_JOIN,
  ON_RESUME,
  LOG_LEVELS,
} from './config/config-schema.js';
export type { ScubaConfigFile } from './config/config-schema.js';
export { resolveConfig } from './config/resolve-config.js';
export type { ClaudeCredential, ResolveContext, ResolveResult, ScubaConfig } from './config/resolve-config.js';
export { loadConfigFile } from './config/load-config.js';
export type { LoadConfigOptions, LoadedConfig } from './config/load-config.js';
export type { BubbleEventDraft, MessagePartDraft, RunFinishedExtras, RunUsage } from './translate/bubble-draft.js';
export { isDeltaDraft } from './translate/bubble-draft.js';
export { outcomeFromResult } from './translate/run-outcome.js';
export type { InterruptNote, OutcomeInput, RunOutcome } from './translate/run-outcome.js';
export { SdkToBubble, SUBAGENT_TOOL_NAMES, contentText } from './translate/sdk-to-bubble.js';
export type { SdkToBubbleOptions, TranslateStep, TranslatorSignal } from './translate/sdk-to-bubble.js';
export { DeltaCoalescer, systemClock } from './translate/delta-coalescer.js';
export type { Clock, DeltaCoalescerOptions } from './translate/delta-coalescer.js';
export { ApprovalRegistry, isAllowedApprover } from './session/approval-registry.js';
export type {
  ApprovalDecision,
  ApprovalRegistryOptions,
  ApproverContext,
  ApproverPolicy,
  DecisionSource,
  ObserveResult,
  ParkedCall,
  ParkRequest,
} from './session/approval-registry.js';
export { SubagentRegistry, subagentKey } from './session/subagent-registry.js';
export type { Delivery, OpenRequest, RegistryStep, SubagentRegistryOptions } from './session/subagent-registry.js';
export { ThreadOutput } from './session/thread-output.js';
export type { ThreadOutputOptions, ThreadOutputStep } from './session/thread-output.js';
