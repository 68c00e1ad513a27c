import { randomUUID } from 'node:crypto';
import type { BubbleEventDraft } from '../translate/bubble-draft.js';
import type { Clock } from '../translate/delta-coalescer.js';
import type { ThreadOutput } from './thread-output.js';
import type { ApprovalAnnouncement } from './tool-gate.js';

export interface ApprovalAnnouncerOptions {
  threadId: string;
  /** Where each tool call is shown, and the bot's running turn. */
  output: Pick<ThreadOutput, 'locateToolCall' | 'currentRunId'>;
  /** Whether the call still waits for an answer. */
  isParked: (toolCallId: string) => boolean;
  /** The session's ordered appender. */
  send: (threadId: string, drafts: readonly BubbleEventDraft[]) => void;
  flush: () => Promise<void>;
  clock: Clock;
}

/** How long a request waits for its call's tool_use to come through (the CLI can ask first, or a sub-agent's subthread may still be opening). */
const LOCATE_WAIT_MS = 3_000;
const LOCATE_STEP_MS = 20;

/**
 * Puts a parked call's `tool-approval-request` on the session's thread
 * (protocol.md, "Tool approvals"): a call of the bot's own turn in that
 * turn's run; a sub-agent's call (or one made while no turn runs) in a run of
 * its own, `approval-<toolCallId>-<random>`, closed when the call is settled,
 * `interrupted` when someone pressed Stop on it. A sub-agent's call also
 * names its subthread, tool and input, since the call itself is shown there.
 */
export class ApprovalAnnouncer {
  readonly #options: ApprovalAnnouncerOptions;
  /** Runs opened only to carry a request: toolCallId → runId. */
  readonly #runs = new Map<string, string>();
  /** Who pressed Stop on such a run, for its run_finished. */
  readonly #stops = new Map<string, { by: string; reason?: string }>();

  constructor(options: ApprovalAnnouncerOptions) {
    this.#options = options;
  }

  async announce(request: ApprovalAnnouncement): Promise<void> {
    const { output, isParked, clock } = this.#options;
    const parked = () => isParked(request.toolCallId);
    let where = output.locateToolCall(request.toolCallId);
    for (
      let waited = 0;
      waited < LOCATE_WAIT_MS &&
      parked() &&
      (where === undefined || (where.subagent !== undefined && where.childThreadId === undefined));
      waited += LOCATE_STEP_MS
    ) {
      await new Promise<void>((resolve) => clock.setTimeout(resolve, LOCATE_STEP_MS));
      where = output.locateToolCall(request.toolCallId);
    }
    // Answered (or stopped) already, before anyone saw the request: nothing to ask any more.
    if (!parked()) return;
    const fromSubagent = where?.subagent !== undefined || request.agentId !== undefined;
    const bubble: Record<string, unknown> = { approvers: request.approvers };
    if (fromSubagent) {
      if (where?.childThreadId !== undefined) bubble.threadId = where.childThreadId;
      bubble.toolName = request.toolName;
      bubble.input = request.input;
    }
    const events: BubbleEventDraft[] = [];
    // A sub-agent's request outlives the turn that launched it (a background agent's turn ends at once),
    // so it gets a run of its own, open exactly as long as the call waits.
    let runId = fromSubagent ? undefined : output.currentRunId;
    if (runId === undefined) {
      // Unguessable, so nobody can open the run first and have the bot's request refused.
      runId = `approval-${request.toolCallId}-${randomUUID().slice(0, 8)}`;
      this.#runs.set(request.toolCallId, runId);
      events.push({ type: 'run_started', data: { runId }, clientEventId: `${runId}:start` });
    }
    events.push({
      type: 'message_part',
      data: {
        runId,
        chunk: {
          type: 'tool-approval-request',
          approvalId: request.toolCallId,
          toolCallId: request.toolCallId,
          providerMetadata: { bubble },
        },
      },
      clientEventId: `${runId}:approval-request:${request.toolCallId}`,
    });
    this.#options.send(this.#options.threadId, events);
    await this.#options.flush();
  }

  /** The call a request-only run carries, if `runId` is one. */
  callOfRun(runId: string): string | undefined {
    for (const [toolCallId, run] of this.#runs) if (run === runId) return toolCallId;
    return undefined;
  }

  /** Someone pressed Stop on the run that carries `toolCallId`'s request. */
  noteStop(toolCallId: string, stop: { by: string; reason?: string }): void {
    this.#stops.set(toolCallId, stop);
  }

  /** The call was settled: the run that only carried its request closes. */
  settled(toolCallId: string): void {
    const runId = this.#runs.get(toolCallId);
    if (runId === undefined) return;
    this.#runs.delete(toolCallId);
    const stop = this.#stops.get(toolCallId);
    this.#stops.delete(toolCallId);
    const data =
      stop === undefined
        ? { runId, status: 'completed' as const }
        : {
            runId,
            status: 'interrupted' as const,
            interruptedBy: stop.by,
            ...(stop.reason !== undefined ? { interruptReason: stop.reason } : {}),
          };
    this.#options.send(this.#options.threadId, [{ type: 'run_finished', data, clientEventId: `${runId}:finish` }]);
  }
}
