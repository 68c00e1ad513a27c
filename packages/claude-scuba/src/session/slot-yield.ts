import { randomUUID } from 'node:crypto';
import type { ApprovalDecision, ParkedCall } from './approval-registry.js';
import type { SessionParts } from './session-parts.js';
import { awayAnswerText, resumeText, setAsideText } from './session-notices.js';
import {
  answeredAway,
  awayAnswersTaken,
  interruptedOutcome,
  interruptOfStart,
  queryOpened,
  queryOpening,
} from './turn-state.js';

export interface SlotYieldHooks {
  /** Between turns: settle, start the next one, or arm the idle close. */
  whenIdle: () => void;
  /** Claude failed to start: the next start waits. */
  noteFailure: (reason: string) => void;
  /** The idle close is off (the query is closed by other means). */
  clearIdle: () => void;
}

/**
 * A turn that waits on a person gives its CLI slot up when another thread
 * needs one: the CLI is closed, the run stays open, and the parked calls stay
 * parked (with their timeout). When the last of them is answered, the query
 * resumes by session id and Claude is told each answer (an allowed call is to
 * be made again: the answer given stands for it, in this run). An interrupt of
 * the run meanwhile ends it without a CLI.
 */
export class SlotYield {
  readonly #parts: SessionParts;
  readonly #hooks: SlotYieldHooks;

  constructor(parts: SessionParts, hooks: SlotYieldHooks) {
    this.#parts = parts;
    this.#hooks = hooks;
  }

  /**
   * Whether this thread's CLI does nothing but wait on a person: every open call parked on an
   * approval, no sub-agent running, no turn starting. Its slot may go to a thread that needs one.
   */
  get yieldable(): boolean {
    const { query, turn, output, tools } = this.#parts;
    return (
      query.live !== undefined &&
      !turn.stopped &&
      turn.starting === undefined &&
      !output.isIdle &&
      tools.approvals.size > 0 &&
      !tools.approvals.allDetached &&
      output.activeSubagents.length === 0 &&
      // Nothing running: every call without a result is one waiting for approval.
      [...output.openCalls].every((toolCallId) => tools.approvals.isParked(toolCallId))
    );
  }

  /** Closes the CLI of a turn that waits on a person (see the class). */
  yieldSlot(reason: string): void {
    if (!this.yieldable) return;
    const { query, tools, output, log } = this.#parts;
    const parked = tools.approvals.detachAll();
    log.info(
      { reason, parked: parked.map((call) => call.toolCallId), runId: output.currentRunId },
      'waiting on a person: yielded my CLI slot',
    );
    query.storeSessionId(query.live!);
    this.#hooks.clearIdle();
    query.setAside();
  }

  /** A call parked while its CLI was closed is settled; once every such call is, the query resumes. */
  answered(call: ParkedCall, decision: ApprovalDecision): void {
    const parts = this.#parts;
    const { output } = parts;
    if (parts.turn.stopped) return;
    const runId = output.currentRunId;
    if (runId === undefined) return;
    const interrupted =
      decision.source === 'closed' || (decision.source === 'interrupt' && parts.turn.interrupted?.runId === runId);
    // The first call will get no result from the CLI that asked it: end it on the thread.
    parts.outbound.send(parts.threadId, [output.callSetAside(runId, call.toolCallId, setAsideText(interrupted))]);
    if (!interrupted) {
      const by = decision.by !== null ? (parts.people.names.get(decision.by) ?? decision.by) : undefined;
      const message = decision.behavior === 'deny' ? decision.message : undefined;
      parts.turn = answeredAway(
        parts.turn,
        awayAnswerText(call.toolName, { behavior: decision.behavior, by, source: decision.source, message }),
      );
    }
    if (parts.tools.approvals.size > 0) return;
    const answers = parts.turn.awayAnswers;
    parts.turn = awayAnswersTaken(parts.turn);
    if (interrupted || parts.turn.interrupted?.runId === runId) {
      this.finishInterrupted(runId);
      return;
    }
    this.#resume(runId, resumeText(answers), answers.length);
  }

  /** Ends a run as interrupted without its CLI (it gave its slot up), crediting who asked. */
  finishInterrupted(runId: string): void {
    const { turn, tools, outbound, output, threadId } = this.#parts;
    const interrupt = turn.interrupted?.runId === runId ? turn.interrupted : undefined;
    tools.forgetAnswered();
    outbound.send(threadId, output.finishRun(runId, interruptedOutcome(interrupt)));
    this.#hooks.whenIdle();
  }

  #resume(runId: string, text: string, answers: number): void {
    const parts = this.#parts;
    const { output, log } = parts;
    log.info({ runId, answers }, 'answers for calls whose CLI was closed: resuming the query');
    const uuid = randomUUID();
    parts.turn = queryOpening(parts.turn, runId);
    void parts.query
      .ensure()
      .then((query) => {
        // Interrupted while it waited for a slot, or closed meanwhile: Claude gets the words as context, no turn.
        if (output.currentRunId !== runId || interruptOfStart(parts.turn, runId)) {
          query.push(text, { uuid, shouldQuery: false });
          output.noteSteer(uuid);
          if (output.currentRunId === runId) this.finishInterrupted(runId);
          return;
        }
        query.push(text, { uuid });
      })
      .catch((error: unknown) => {
        log.error({ err: error, runId }, 'could not resume the Claude query');
        parts.tools.forgetAnswered();
        parts.sender.send(
          output.closeAll({
            status: 'error',
            error: { code: 'engine_start_failed', message: 'Claude could not be started again.' },
          }),
        );
        this.#hooks.noteFailure(error instanceof Error ? error.message : String(error));
      })
      .finally(() => {
        parts.turn = queryOpened(parts.turn, runId);
        if (output.isIdle) this.#hooks.whenIdle();
      });
  }
}
