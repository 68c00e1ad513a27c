/**
 * The thread fold: one typed, pure, immutable reading of a thread's events, which the web UI,
 * `bubble tail`, `browse_thread` and the bots all read instead of folding events their own way.
 */
export { foldThread, foldTypedEvent, foldEvents, foldPresence, type PresenceChange } from './fold-thread.js';
export {
  emptyThreadState,
  runOf,
  runsOf,
  toolCallOf,
  toolCallsOf,
  timelineOf,
  threadSnapshot,
  participantOf,
  artifactOf,
  isOnline,
  type ThreadState,
  type RunState,
  type ThreadRunStatus,
  type ToolCallState,
  type ApprovalRequest,
  type ApprovalAnswer,
  type SuppliedResult,
  type Participant,
  type ArtifactState,
  type ThreadNotice,
  type TimelineItem,
  type ThreadSnapshot,
} from './thread-state.js';
export { noticeText, settingsText, byteSize, controlNotice, type ControlEvent } from './notice-text.js';
export { listGet, listItems, type PersistentList } from './persistent-list.js';
export { mapGet, mapEntries, type PersistentMap } from './persistent-map.js';
export { answerCounts, isNamedApprover } from './approver-rule.js';
export {
  approvalRequestOf,
  approvalOf,
  suppliedResultOf,
  requestedToolPart,
  waitingRequestOf,
  waitingToolCalls,
  subagentRequests,
  mayApprove,
  type IsBot,
  type WaitingToolCall,
} from './tool-approvals.js';
export {
  applyChunk,
  emptyAssembly,
  openBlocks,
  openBlockIndex,
  type MessageAssembly,
  type OpenBlock,
  type PartSeqs,
} from './message-assembly.js';
export { parsePartialJson } from './partial-json.js';
export {
  isToolUIPart,
  toolNameOf,
  type UIMessage,
  type UIMessagePart,
  type TextUIPart,
  type ReasoningUIPart,
  type ToolUIPart,
  type StaticToolUIPart,
  type DynamicToolUIPart,
  type ToolPartState,
  type ToolApproval,
  type SourceUrlUIPart,
  type SourceDocumentUIPart,
  type FileUIPart,
  type StepStartUIPart,
  type DataUIPart,
  type ProviderMetadata,
} from './ui-message.js';
