import { RunInterruptRequestedDataSchema, type EventEnvelope } from '@bubble/protocol';
import { extractDrainPayload, type DrainPayload } from '@bubble/sdk';

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
  #buffer: EventEnvelope[] = [];

  constructor(options: { selfId: string; displayNames: Map<string, string> }) {
    this.#selfId = options.selfId;
    this.#displayNames = options.displayNames;
  }

  /** Seqs waiting in the buffer. */
  get bufferedSeqs(): number[] {
    return this.#buffer.map((event) => event.seq);
  }

  observe(event: EventEnvelope): Observation {
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
      return { kind: 'buffered' };
    }
    return { kind: 'other' };
  }

  /** Takes every finalized run; undefined when nothing in the buffer is final. */
  drain(): DrainPayload | undefined {
    if (this.#buffer.length === 0) return undefined;
    const payload = extractDrainPayload(this.#buffer, { selfPrincipalId: this.#selfId, displayNames: this.#displayNames });
    if (payload.consumedSeqs.length === 0) return undefined;
    this.#buffer = [...payload.remaining];
    return payload;
  }
}
