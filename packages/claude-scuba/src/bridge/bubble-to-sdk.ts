import { RunInterruptRequestedDataSchema, type EventEnvelope } from '@bubble/protocol';
import { extractDrainPayload, runKey, type DrainPayload } from '@bubble/sdk';

/** What one observed event means for the session. */
export type Observation =
  /** The bot's own event: never reaches the drain (a bot must not prompt itself). */
  | { kind: 'own' }
  | { kind: 'interrupt'; runId: string; by: string; reason?: string }
  /** A foreign run event, now buffered until its run is final. */
  | { kind: 'buffered' }
  /** Anything else (approvals, participants, artifacts, custom types): for other lanes. */
  | { kind: 'other' };

const RUN_EVENTS: ReadonlySet<string> = new Set(['run_started', 'message_part', 'run_finished']);

/**
 * The drain rule (seed: "Turn boundaries"): foreign run events wait in a
 * buffer; `drain()` takes every finalized run at once through the sdk's
 * `extractDrainPayload` and leaves in-flight runs buffered. State only.
 */
export class BubbleToSdkDrain {
  readonly #selfId: string;
  readonly #displayNames: Map<string, string>;
  readonly #staleMs: number;
  #buffer: EventEnvelope[] = [];
  /** When each buffered run last had an event (ms, as this process saw it). */
  readonly #lastActivity = new Map<string, number>();

  constructor(options: { selfId: string; displayNames: Map<string, string>; staleMs?: number }) {
    this.#selfId = options.selfId;
    this.#displayNames = options.displayNames;
    this.#staleMs = options.staleMs ?? Number.POSITIVE_INFINITY;
  }

  /** When the oldest in-flight run turns stale (ms), or undefined when none waits. */
  get nextStaleAt(): number | undefined {
    if (this.#lastActivity.size === 0 || !Number.isFinite(this.#staleMs)) return undefined;
    return Math.min(...this.#lastActivity.values()) + this.#staleMs;
  }

  /** Seqs waiting in the buffer. */
  get bufferedSeqs(): number[] {
    return this.#buffer.map((event) => event.seq);
  }

  observe(event: EventEnvelope, now: number = Date.now()): Observation {
    if (event.principalId === this.#selfId) return { kind: 'own' };
    if (event.type === 'run_interrupt_requested') {
      const parsed = RunInterruptRequestedDataSchema.safeParse(event.data);
      if (!parsed.success) return { kind: 'other' };
      const observation: Observation = { kind: 'interrupt', runId: parsed.data.runId, by: event.principalId };
      if (parsed.data.reason !== undefined) observation.reason = parsed.data.reason;
      return observation;
    }
    if (RUN_EVENTS.has(event.type)) {
      this.#buffer.push(event);
      const runId = event.data.runId;
      // Quiet is timed from when this process saw the run's last event: a replay after downtime must not
      // find every message written meanwhile stale at once (it would drain a run_started alone).
      if (typeof runId === 'string') this.#lastActivity.set(runKey(event.principalId, runId), now);
      return { kind: 'buffered' };
    }
    return { kind: 'other' };
  }

  /**
   * Takes every finalized run, and every run whose author has been quiet for
   * `staleMs` (taken as it stands; `stale` names them); undefined when nothing
   * in the buffer is final.
   */
  drain(now: number = Date.now()): (DrainPayload & { stale: string[] }) | undefined {
    if (this.#buffer.length === 0) return undefined;
    const staleRuns = new Set(
      [...this.#lastActivity].filter(([, at]) => at + this.#staleMs <= now).map(([key]) => key),
    );
    const payload = extractDrainPayload(this.#buffer, {
      selfPrincipalId: this.#selfId,
      displayNames: this.#displayNames,
      staleRuns,
    });
    if (payload.consumedSeqs.length === 0) return undefined;
    this.#buffer = [...payload.remaining];
    const left = new Set(
      this.#buffer.map((event) =>
        typeof event.data.runId === 'string' ? runKey(event.principalId, event.data.runId) : '',
      ),
    );
    for (const key of [...this.#lastActivity.keys()]) if (!left.has(key)) this.#lastActivity.delete(key);
    const stale = payload.parts
      .filter((part) => staleRuns.has(runKey(part.principalId, part.runId)))
      .map((part) => part.runId);
    return { ...payload, stale };
  }
}
