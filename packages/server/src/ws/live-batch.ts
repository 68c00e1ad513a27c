import type { EventEnvelope } from '@bubble/protocol';
import { EVENT_FRAME_SUFFIX } from './frame-codec.js';
import { encodeTextFrame } from './ws-frame.js';

/**
 * One committed batch of a thread's events as the hub hands it to that thread's subscriptions:
 * each event serialized once, and each event's `event` frame encoded once per subscription id,
 * on first use. Subscribers whose subscriptions share an id (the SDK numbers its own `s1`, `s2`,
 * ..., so many clients of one thread do) share the same bytes; the frame differs only by id.
 * Lives for one dispatch; the frames it made stay queued on the sockets until they are written.
 */
export class LiveBatch {
  readonly events: readonly EventEnvelope[];
  /** `JSON.stringify` of each event. */
  readonly jsons: readonly string[];
  readonly #frames = new Map<string, Array<Buffer | undefined>>();

  constructor(events: readonly EventEnvelope[]) {
    this.events = events;
    this.jsons = events.map((event) => JSON.stringify(event));
  }

  /** The wire bytes of event `index`'s frame for the subscription whose frames start with `prefix` (`eventFramePrefix`). Never written into. */
  frame(prefix: string, index: number): Buffer {
    let frames = this.#frames.get(prefix);
    if (frames === undefined) {
      frames = new Array<Buffer | undefined>(this.events.length);
      this.#frames.set(prefix, frames);
    }
    let frame = frames[index];
    if (frame === undefined) {
      frame = encodeTextFrame(prefix + (this.jsons[index] as string) + EVENT_FRAME_SUFFIX);
      frames[index] = frame;
    }
    return frame;
  }
}

/**
 * The bytes of one flush, reused by the next socket if it has the very same frames queued: the
 * subscribers of one thread usually do (the same events, framed once, since the last flush), so
 * the hub's flush joins them once rather than once per socket (at 1,000 subscribers that was
 * megabytes of copies per flush). Compares frames by identity only: for one flush of the hub.
 */
export class JoinedFrames {
  #frames: readonly Buffer[] = [];
  #joined: Buffer | null = null;

  join(frames: readonly Buffer[], bytes: number): Buffer {
    if (this.#joined !== null && sameFrames(frames, this.#frames)) return this.#joined;
    const joined = Buffer.concat(frames, bytes);
    this.#frames = frames;
    this.#joined = joined;
    return joined;
  }
}

function sameFrames(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}
