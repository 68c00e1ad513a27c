import {
  assertNever,
  MessagePartDataSchema,
  RunFinishedDataSchema,
  RunStartedDataSchema,
  isKnownEventType,
  type EventEnvelope,
  type KnownEventType,
} from '@bubble/protocol';
import { promptBlocks } from './quote-speakers.js';

/**
 * The drain assembler: decides which foreign runs in a bot's buffer are final, and turns them
 * into one prompt. Pure: no I/O, no clock, no logging.
 *
 * Rules (seed 000, "Turn boundaries: the drain rule"):
 * - a run is finalized when its `run_finished` is in the buffer, or when the buffer holds no
 *   `run_started` for it (a bare-delta turn: its parts count as final as they land);
 * - the text deltas of every finalized run are concatenated in seq order (runs ordered by their
 *   first buffered event), each quoted by its author's id (`quoteSpeaker`: `alice: …`);
 * - runs that carry no text (only tool or reasoning chunks) are consumed without yielding text;
 * - `file` chunks of finalized runs are collected;
 * - events of in-flight runs (a `run_started` without its `run_finished`) stay buffered, unless
 *   the caller names them in `staleRuns` (their author went quiet: taken as they stand);
 * - every other event (interrupt requests, approvals, tool results, participant and artifact
 *   events, custom dotted types, malformed events) is consumed and never yields text: the session
 *   observes those through its own lanes;
 * - events authored by `selfPrincipalId` are dropped (consumed, never yielded): a bot must not
 *   prompt itself.
 */

export interface DrainOptions {
  /** The bot's own principal id: its events are dropped. */
  readonly selfPrincipalId: string;
  /** Display names by principal id, for attribution. A missing name falls back to the id. */
  readonly displayNames?: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
  /**
   * Runs to take as final although their `run_finished` has not come (their
   * author went quiet mid-message), keyed by `runKey(principalId, runId)`.
   */
  readonly staleRuns?: ReadonlySet<string>;
}

/** The key of a run in `staleRuns`: a runId belongs to one principal on a thread. */
export function runKey(principalId: string, runId: string): string {
  return `${principalId}\u0000${runId}`;
}

/** The text one finalized run contributed. */
export interface DrainPart {
  readonly principalId: string;
  readonly displayName: string;
  readonly runId: string;
  readonly text: string;
  /** Every seq of the run that was in the buffer, ascending. */
  readonly seqs: readonly number[];
}

export interface DrainFile {
  readonly url: string;
  readonly mediaType: string;
  readonly principalId: string;
  readonly runId: string;
  readonly seq: number;
}

export interface DrainPayload {
  /** Every part's text in order, each quoted by its speaker's id (`formatDrainText`). Empty when nothing yields text. */
  readonly text: string;
  readonly parts: readonly DrainPart[];
  readonly files: readonly DrainFile[];
  /** Seqs of every event removed from the buffer (yielding or not), ascending. */
  readonly consumedSeqs: readonly number[];
  /** Events still buffered (in-flight runs), in their original order. */
  readonly remaining: readonly EventEnvelope[];
  /** The anchors to reply to: the first seq of each run that yielded text or files, ascending. */
  readonly replyTo: readonly number[];
}

interface RunAccumulator {
  readonly principalId: string;
  readonly runId: string;
  readonly events: EventEnvelope[];
  started: boolean;
  finished: boolean;
  /** Text by text-block id, in order of first appearance. */
  readonly blocks: Map<string, string>;
  readonly files: DrainFile[];
}

type Classified = { kind: 'run'; runId: string } | { kind: 'consume' };

/** Which lane an event belongs to. Exhaustive over the known types; unknown (custom) types are consumed. */
function classify(event: EventEnvelope): Classified {
  const type = event.type;
  if (!isKnownEventType(type)) return { kind: 'consume' };
  const known: KnownEventType = type;
  switch (known) {
    case 'run_started': {
      const parsed = RunStartedDataSchema.safeParse(event.data);
      return parsed.success ? { kind: 'run', runId: parsed.data.runId } : { kind: 'consume' };
    }
    case 'run_finished': {
      const parsed = RunFinishedDataSchema.safeParse(event.data);
      return parsed.success ? { kind: 'run', runId: parsed.data.runId } : { kind: 'consume' };
    }
    case 'message_part': {
      const parsed = MessagePartDataSchema.safeParse(event.data);
      return parsed.success ? { kind: 'run', runId: parsed.data.runId } : { kind: 'consume' };
    }
    case 'run_interrupt_requested':
    case 'tool_call_approval':
    case 'tool_call_result':
    case 'participant_added':
    case 'participant_removed':
    case 'artifact_updated':
    case 'agent_settings':
    case 'context_reset':
    case 'file_added':
      return { kind: 'consume' };
    default:
      return assertNever(known, 'event type');
  }
}

function displayNameOf(options: DrainOptions, principalId: string): string {
  const names = options.displayNames;
  if (!names) return principalId;
  const name = names instanceof Map ? names.get(principalId) : (names as Readonly<Record<string, string>>)[principalId];
  return typeof name === 'string' && name.trim() !== '' ? name : principalId;
}

function accumulate(run: RunAccumulator, event: EventEnvelope): void {
  run.events.push(event);
  if (event.type === 'run_started') {
    run.started = true;
    return;
  }
  if (event.type === 'run_finished') {
    run.finished = true;
    return;
  }
  const parsed = MessagePartDataSchema.safeParse(event.data);
  if (!parsed.success) return;
  const chunk = parsed.data.chunk;
  if (chunk.type === 'text-delta') {
    run.blocks.set(chunk.id, (run.blocks.get(chunk.id) ?? '') + chunk.delta);
  } else if (chunk.type === 'file') {
    run.files.push({
      url: chunk.url,
      mediaType: chunk.mediaType,
      principalId: run.principalId,
      runId: run.runId,
      seq: event.seq,
    });
  }
  // Every other chunk (text-start/-end, reasoning, tool input/output, sources, steps, data-*) is not user text.
}

/** The payload's text: each part quoted by its speaker's id (`quoteSpeaker`), one paragraph each. */
export function formatDrainText(parts: readonly DrainPart[]): string {
  return promptBlocks(parts)
    .map((block) => block.text)
    .join('\n\n');
}

/** Assembles the drainable payload of a buffer of foreign events (see the module comment for the rules). */
export function extractDrainPayload(buffer: readonly EventEnvelope[], options: DrainOptions): DrainPayload {
  const ordered = [...buffer].sort((a, b) => a.seq - b.seq);
  const runs = new Map<string, RunAccumulator>();
  const consumed: number[] = [];

  for (const event of ordered) {
    if (event.principalId === options.selfPrincipalId) {
      consumed.push(event.seq);
      continue;
    }
    const lane = classify(event);
    if (lane.kind === 'consume') {
      consumed.push(event.seq);
      continue;
    }
    // A runId belongs to one principal on a thread; keying by both keeps a misbehaving peer from
    // mixing its text into someone else's run.
    const key = runKey(event.principalId, lane.runId);
    let run = runs.get(key);
    if (!run) {
      run = {
        principalId: event.principalId,
        runId: lane.runId,
        events: [],
        started: false,
        finished: false,
        blocks: new Map(),
        files: [],
      };
      runs.set(key, run);
    }
    accumulate(run, event);
  }

  const parts: DrainPart[] = [];
  const files: DrainFile[] = [];
  const replyTo: number[] = [];
  const keptSeqs = new Set<number>();

  for (const [key, run] of runs) {
    const finalized = run.finished || !run.started || options.staleRuns?.has(key) === true;
    if (!finalized) {
      for (const event of run.events) keptSeqs.add(event.seq);
      continue;
    }
    const seqs = run.events.map((event) => event.seq);
    consumed.push(...seqs);
    const text = [...run.blocks.values()].filter((block) => block.trim() !== '').join('\n\n');
    if (text.trim() !== '') {
      parts.push({
        principalId: run.principalId,
        displayName: displayNameOf(options, run.principalId),
        runId: run.runId,
        text,
        seqs,
      });
    }
    files.push(...run.files);
    if (text.trim() !== '' || run.files.length > 0) replyTo.push(seqs[0] as number);
  }

  // Runs are met in seq order of their first event, so `parts` is already in that order.
  return {
    text: formatDrainText(parts),
    parts,
    files,
    consumedSeqs: consumed.sort((a, b) => a - b),
    remaining: buffer.filter((event) => keptSeqs.has(event.seq)),
    replyTo: replyTo.sort((a, b) => a - b),
  };
}
