import { randomUUID } from 'node:crypto';
import type { LiveQuery, LiveQueryEnd, NarrowedSdkMessage } from '@bubble/engine';
import type { Logger } from 'pino';
import { BubbleToSdkDrain } from '../bridge/bubble-to-sdk.js';
import type { ScubaConfig } from '../config/resolve-config.js';
import { systemClock, type Clock } from '../translate/delta-coalescer.js';
import { ApprovalAnnouncer } from './approval-announcer.js';
import type { ApprovalDecision, ParkedCall } from './approval-registry.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import { Outbound } from './outbound.js';
import type { SessionOptions } from './session-options.js';
import { StepSender } from './step-sender.js';
import { ThreadAdmission } from './thread-admission.js';
import { ThreadLedger } from './thread-ledger.js';
import { ThreadOutput } from './thread-output.js';
import { ThreadPeople } from './thread-people.js';
import { ThreadQuery } from './thread-query.js';
import { ToolGate } from './tool-gate.js';
import { initialTurnState, type TurnState } from './turn-state.js';

/** The parts of one thread's session, wired together; the session and its helpers share them. */
export interface SessionParts {
  readonly threadId: string;
  readonly selfId: string;
  readonly config: ScubaConfig;
  /** The session's logger (carries threadId and principalId). */
  readonly log: Logger;
  readonly clock: Clock;
  /** Runs this process has open, on every thread (the bot's record; this session adds and removes its own). */
  readonly liveRuns: Set<string>;
  /** Who is on the thread: roles for approvals, names for attribution. */
  readonly people: ThreadPeople;
  /** The drain rule: what was written, buffered until it is final. */
  readonly drain: BubbleToSdkDrain;
  /** What the thread says the bot already answered, and the bot-only streak. */
  readonly ledger: ThreadLedger;
  /** The query's output, sorted onto this thread and sub-agents' subthreads. */
  readonly output: ThreadOutput;
  readonly outbound: Outbound;
  readonly sender: StepSender;
  readonly tools: ToolGate;
  readonly announcer: ApprovalAnnouncer;
  /** Whether the bot works on this thread at all (an owner is on it, or on an ancestor). */
  readonly admission: ThreadAdmission;
  readonly checkpoints: CheckpointWriter;
  readonly query: ThreadQuery;
  /** The turn state: one value, replaced through the transitions of `turn-state.ts`, never mutated. */
  turn: TurnState;
}

/** What the parts call back into the session that owns them. */
export interface SessionHooks {
  /** A call parked while its CLI was closed (the slot was given up) was settled. */
  answeredWhileAway: (call: ParkedCall, decision: ApprovalDecision) => void;
  /** Every CLI slot is taken: asks the bot to free one. Whether it did. */
  freeSlot: () => boolean;
  /** One message of the thread's query, narrowed by the engine. */
  message: (query: LiveQuery, message: NarrowedSdkMessage) => Promise<void>;
  /** The thread's query ended (its slot is free again). */
  queryEnded: (query: LiveQuery, end: LiveQueryEnd) => void;
}

/** Builds every part of one thread's session, top to bottom. */
export function createSessionParts(options: SessionOptions, hooks: SessionHooks): SessionParts {
  const { threadId, selfId, config, client } = options;
  const clock = options.clock ?? systemClock;
  const log = options.logger.child({ threadId, principalId: selfId });
  const liveRuns = options.liveRuns ?? new Set<string>();
  const people = new ThreadPeople({ threadId, selfId, client, logger: log });
  const drain = new BubbleToSdkDrain({
    selfId,
    displayNames: people.names,
    staleMs: config.turns.staleRunSeconds * 1000,
  });
  const ledger = new ThreadLedger({ selfId, isBot: (p) => people.isBot(p) });
  const output = new ThreadOutput({
    threadId,
    newRunId: () => `run-${randomUUID()}`,
    now: () => new Date(clock.now()),
  });
  const checkpoints = new CheckpointWriter({
    settle: options.settle,
    waiting: () => ({ seqs: [...drain.bufferedSeqs, ...parts.turn.seqs], lastSeq: parts.turn.lastSeq }),
    quiet: () => output.isIdle && parts.turn.starting === undefined,
    clock,
    logger: log,
  });
  const outbound = new Outbound({
    append: client.appendEvents,
    logger: log,
    clock,
    observe: (drafts) => {
      for (const draft of drafts) if (draft.type === 'run_started') liveRuns.add(draft.data.runId);
    },
    // Open until its close has landed: a scan of the thread meanwhile must not take it for one a crash left open.
    settled: (drafts) => {
      for (const draft of drafts) if (draft.type === 'run_finished') liveRuns.delete(draft.data.runId);
    },
  });
  const tools: ToolGate = new ToolGate({
    threadId,
    selfId,
    approvers: config.approvals.approvers,
    timeoutMs: config.approvals.timeoutSeconds * 1000,
    roles: people.roles,
    botOwners: options.botOwners,
    nameOf: (id) => people.names.get(id) ?? options.ownerNames?.get(id) ?? id,
    cwd: () => query.workspaceDir,
    privatePaths: options.isolation.kind === 'sandbox' ? options.isolation.privatePaths : [],
    clock,
    logger: log,
    append: (events) => client.appendEvents(threadId, events),
    flush: () => outbound.flush(),
    currentRunId: () => output.currentRunId,
    callContext: (toolCallId) => output.callContext(toolCallId),
    announce: (request) => announcer.announce(request),
    onSettled: (toolCallId) => announcer.settled(toolCallId),
    onDenied: (toolCallId, reason) => output.noteDenied(toolCallId, reason),
    onDetachedAnswer: hooks.answeredWhileAway,
    tools: options.tools,
  });
  const announcer = new ApprovalAnnouncer({
    threadId,
    output,
    isParked: (toolCallId) => tools.approvals.isParked(toolCallId),
    send: (to, drafts) => outbound.send(to, drafts),
    flush: () => outbound.flush(),
    clock,
  });
  const admission = new ThreadAdmission({
    threadId,
    botOwners: options.botOwners,
    joinableBy: options.joinableBy,
    roles: people.roles,
    client,
    logger: log,
  });
  const query: ThreadQuery = new ThreadQuery({
    threadId,
    config,
    store: options.store,
    runQueue: options.runQueue,
    startQuery: options.startQuery,
    childEnv: options.childEnv,
    isolation: options.isolation,
    canUseTool: tools.canUseTool,
    mcpServers: () => (options.tools ? tools.mcpServers() : undefined),
    spares: options.spares && {
      engine: options.spares,
      binding: { canUseTool: tools.canUseTool, mcpCalls: tools.mcpCalls },
    },
    logger: log,
    freeSlot: hooks.freeSlot,
    waitsForSlot: (position, slots) => {
      // Said in the log and on the thread (the run shows why nothing happens yet).
      const runId = output.currentRunId;
      log.info({ position, slots, runId }, 'turn waits for a CLI slot');
      if (runId !== undefined) outbound.send(threadId, [output.status(runId, { waitingForSlot: position, slots })]);
    },
    opened: () => output.newQuery(),
    message: hooks.message,
    ended: hooks.queryEnded,
  });
  const sender = new StepSender({ output, outbound, client, logger: log, subthreadEnded: options.subthreadEnded });
  const parts: SessionParts = {
    threadId,
    selfId,
    config,
    log,
    clock,
    liveRuns,
    people,
    drain,
    ledger,
    output,
    outbound,
    sender,
    tools,
    announcer,
    admission,
    checkpoints,
    query,
    turn: initialTurnState,
  };
  return parts;
}
