export { startModelDouble, OFFLINE_REPLY, TITLE_REPLY, SUGGESTION_REPLY } from './model-double.js';
export type { ModelDouble, ModelDoubleOptions, RecordedRequest } from './model-double.js';
export {
  ScriptSchema,
  RuleSchema,
  MatchSchema,
  ReplyBlockSchema,
  ErrorActionSchema,
  TextMatchSchema,
  ToolResultMatchSchema,
  UsageSchema,
  StopReasonSchema,
} from './script.js';
export type {
  Script,
  Rule,
  Match,
  ReplyBlock,
  TextBlock,
  ThinkingBlock,
  ToolUseBlock,
  ErrorAction,
  ErrorStatus,
  TextMatch,
  ToolResultMatch,
  UsageOverride,
  StopReason,
} from './script.js';
export { parseScript, parseScriptJson, ScriptError } from './parse-script.js';
export { DEMO_SCRIPT, DEMO_TRIES, DEMO_COMMAND, DEMO_ARTIFACT_NAME, type DemoTry } from './demo-script.js';
export { API_ERRORS } from './api-errors.js';
export type { ApiErrorType, ApiErrorBody } from './api-errors.js';
export type { RequestKind, ToolResultInfo, TaskNotificationInfo } from './request-info.js';
