import type { ClientFrame, ErrorFrame, SubscribeFrame } from '@bubble/protocol';
import type { Logger } from 'pino';
import { subscribeFrames } from './subscribe-frames.js';

/**
 * How long thread subscribes wait to go out together after a subscribe was sent, in ms. The first
 * subscribe after a quiet spell goes out at the end of the current task (with every other one
 * asked for in it); those that follow within this long join the next batch (as Nagle's algorithm
 * does for TCP). A bot that opens its threads one by one, as each one's HTTP reads answer, thus
 * spends a few frames of its rate budget, not one per thread; a person opening one thread sees
 * no delay.
 */
export const SUBSCRIBE_LINGER_MS = 20;

/** What the queue needs of the socket it sends on. */
export interface SubscribeQueueLink {
  send(frame: ClientFrame): void;
  isReady(): boolean;
}

/**
 * The thread subscribes of one socket on their way out: those asked for together go as one
 * `subscribe_batch` (`subscribeFrames`), those that follow soon after wait for the next one
 * (`SUBSCRIBE_LINGER_MS`). The socket sends what waits before any other frame (`flush`), so the
 * server sees every frame in the order it was asked for.
 *
 * A server that does not know `subscribe_batch` answers it as an unknown frame type
 * (`invalid_request` with no id, `details.type: "subscribe_batch"`): from then on the queue sends
 * one `subscribe` each on this socket, and sends the entries of the batches it sent so far again
 * that way (none of them was answered: the server read none of them).
 */
export class SubscribeQueue {
  #waiting: SubscribeFrame[] = [];
  /** The send of `#waiting` planned (at the end of this task, or after the linger); 0 when none is. */
  #plan = 0;
  #lastPlan = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  /** Whether this socket's server takes `subscribe_batch` (until it says it does not). */
  #batching = true;
  /** Entries sent in a batch and not answered yet, by wire id: what to send again if batches are refused. */
  readonly #unanswered = new Map<string, SubscribeFrame>();
  readonly #link: SubscribeQueueLink;
  readonly #logger: Logger;

  constructor(link: SubscribeQueueLink, logger: Logger) {
    this.#link = link;
    this.#logger = logger;
  }

  /** Queues a subscribe; it goes out at the end of this task, or once the linger after the last send is over. */
  add(frame: SubscribeFrame): void {
    this.#waiting.push(frame);
    if (this.#plan !== 0) return;
    const plan = (this.#lastPlan += 1);
    this.#plan = plan;
    const wait = this.#lastSentAt + SUBSCRIBE_LINGER_MS - Date.now();
    if (wait > 0) this.#timer = setTimeout(() => this.flush(), wait);
    else
      queueMicrotask(() => {
        // Sent already (another frame went first), or planned again since: not this plan's to send.
        if (this.#plan === plan) this.flush();
      });
  }

  /** Sends what waits, now: in batches, or one by one to a server that does not take them. */
  flush(): void {
    this.#plan = 0;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length === 0) return;
    const waiting = this.#waiting;
    this.#waiting = [];
    // Not ready: the next `server.ready` subscribes them all again.
    if (!this.#link.isReady()) return;
    for (const frame of subscribeFrames(waiting, this.#batching)) {
      if (frame.type === 'subscribe_batch')
        for (const entry of frame.subscriptions) this.#unanswered.set(entry.id, { type: 'subscribe', ...entry });
      this.#link.send(frame);
    }
    this.#lastSentAt = Date.now();
  }

  /** The server answered the subscribe of `wireId` (`subscribed`, or an `error` with its id). */
  answered(wireId: string): void {
    this.#unanswered.delete(wireId);
  }

  /**
   * Whether `frame`, an `error` with no id, says this socket's server does not take
   * `subscribe_batch`. If so, the queue sends one `subscribe` each from now on, first those of
   * the batches it sent that are `stillWanted`.
   */
  refusedBatches(frame: ErrorFrame, stillWanted: (wireId: string) => boolean): boolean {
    const { code, details } = frame.error;
    // An unknown frame type has only `type` in its details; a server that knows batches says why it
    // refused one (`limit`, `count`, `index`), and that is not a reason to send them one by one.
    const unknownType = details.type === 'subscribe_batch' && Object.keys(details).length === 1;
    if (!this.#batching || code !== 'invalid_request' || !unknownType) return false;
    this.#batching = false;
    this.#logger.warn(
      { resent: this.#unanswered.size },
      'the server does not take subscribe_batch; subscribing one by one on this socket',
    );
    const resend = [...this.#unanswered.entries()];
    this.#unanswered.clear();
    for (const [wireId, subscribe] of resend) if (stillWanted(wireId)) this.#link.send(subscribe);
    this.flush();
    return true;
  }

  /** The socket is gone, and what waited with it. The next socket may reach another server (upgraded): batches again. */
  reset(): void {
    this.#waiting = [];
    this.#plan = 0;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastSentAt = Number.NEGATIVE_INFINITY;
    this.#batching = true;
    this.#unanswered.clear();
  }
}
