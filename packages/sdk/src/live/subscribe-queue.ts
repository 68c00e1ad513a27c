import type { ClientFrame, ErrorFrame, SubscribeFrame } from '@bubble/protocol';
import type { Logger } from 'pino';
import { subscribeFrames } from './subscribe-frames.js';
import { SubscribePacing } from './subscribe-pacing.js';

/**
 * How long thread subscribes wait to go out together after a subscribe was sent, in ms. The first
 * subscribe after a quiet spell goes out at the end of the current task (with every other one
 * asked for in it); those that follow within this long join the next batch (as Nagle's algorithm
 * does for TCP). A bot that opens its threads one by one, as each one's HTTP reads answer, thus
 * spends a few frames of its rate budget, not one per thread; a person opening one thread sees
 * no delay.
 */
export const SUBSCRIBE_LINGER_MS = 20;

/** The wait before subscribing again after a `rate_limited` refusal that gave no `retryAfterSeconds`. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** The wait a `rate_limited` error asks for, in seconds. */
export function retryAfterSecondsOf(frame: ErrorFrame): number {
  const given = frame.error.details.retryAfterSeconds;
  return typeof given === 'number' && given > 0 ? given : DEFAULT_RETRY_AFTER_SECONDS;
}

/** What the queue needs of the socket it sends on. */
export interface SubscribeQueueLink {
  send(frame: ClientFrame): void;
  isReady(): boolean;
  /** Whether a subscription still has this wire id (it may have ended, or been parked, since). */
  isWanted(wireId: string): boolean;
}

/**
 * The thread subscribes of one socket on their way out: those asked for together go as one
 * `subscribe_batch` (`subscribeFrames`), those that follow soon after wait for the next one
 * (`SUBSCRIBE_LINGER_MS`). The socket sends what waits before any other frame (`flush`), so the
 * server sees every frame in the order it was asked for; where the pacing below holds subscribes
 * back, one whose subscription ends meanwhile is taken back instead (`withdraw`), so the server
 * never gets its subscribe after its unsubscribe.
 *
 * A server that does not know `subscribe_batch` answers it as an unknown frame type
 * (`invalid_request` with no id, `details.type: "subscribe_batch"`): from then on the queue sends
 * one `subscribe` each on this socket, and sends the entries of the batches it sent so far again
 * that way (none of them was answered: the server read none of them). Those go out paced
 * (`SubscribePacing`): a socket's worth sent at once would have the server's frame rate limit
 * refuse enough in a row to close the socket (4008), and the reconnect would do the same again.
 *
 * Such a server's frame rate limit refuses a batch whole, as the frame it is: one `rate_limited`
 * error with no id (a server that knows batches names each id). The queue tells which frame such
 * an error answers by order, since a server answers a ping, and refuses a frame, as it reads it:
 * pings sent before a batch are answered before it. So while a batch to a server not yet known to
 * take batches has had no answer, no ping is sent (`ping`; every server answers the batch, so it
 * shows the socket is alive as well), and an error without id that no ping is owed is that
 * batch's: its subscriptions are handed back to be sent again after the server's wait. Once the
 * server answers an entry of a batch by its id, it takes batches, and every `rate_limited` error
 * without id is a ping's.
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
  /** Whether the server has answered an entry of a batch by its id: then it never refuses one whole. */
  #takesBatches = false;
  /** Entries sent in a batch and not answered yet, by wire id: what to send again if batches are refused. */
  readonly #unanswered = new Map<string, SubscribeFrame>();
  /**
   * The frames without an id sent and not answered yet, in the order they went: pings, and (until
   * `#takesBatches`) batches with the wire ids of their entries. A server answers a socket's frames
   * in the order it reads them, so an answer without an id (a `pong`, an `error` with no id) is the
   * oldest one's that can take it.
   */
  #idless: Array<{ kind: 'ping' } | { kind: 'batch'; ids: string[] }> = [];
  /** How fast subscribes go out one by one, once the server has said it does not take batches. */
  #pacing = new SubscribePacing();
  #pacingTimer: ReturnType<typeof setTimeout> | undefined;
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

  /**
   * Sends what waits, now: in batches; or one by one to a server that does not take them, as many
   * as the pacing lets through (the rest go as answers come back, or once the server's wait is over).
   */
  flush(): void {
    this.#plan = 0;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length === 0) return;
    // Not ready: the next `server.ready` subscribes them all again.
    if (!this.#link.isReady()) {
      this.#waiting = [];
      return;
    }
    if (!this.#batching) {
      this.#sendPaced();
      return;
    }
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const frame of subscribeFrames(waiting, true)) {
      if (frame.type === 'subscribe_batch') {
        for (const entry of frame.subscriptions) this.#unanswered.set(entry.id, { type: 'subscribe', ...entry });
        if (!this.#takesBatches)
          this.#idless.push({ kind: 'batch', ids: frame.subscriptions.map((entry) => entry.id) });
      }
      this.#link.send(frame);
    }
    this.#lastSentAt = Date.now();
  }

  /** Takes back the subscribe of `wireId` if it has not gone out yet; answers whether it had not. */
  withdraw(wireId: string): boolean {
    const at = this.#waiting.findIndex((frame) => frame.id === wireId);
    if (at === -1) return false;
    this.#waiting.splice(at, 1);
    return true;
  }

  /** The server answered the subscribe of `wireId`: `subscribed`, or `error`, an `error` with its id. */
  answered(wireId: string, error?: ErrorFrame): void {
    if (this.#unanswered.delete(wireId) && !this.#takesBatches) {
      // An entry of a batch answered by its id: this server reads batches, so it never refuses one whole.
      this.#takesBatches = true;
      this.#idless = this.#idless.filter((frame) => frame.kind === 'ping');
    }
    const rateLimitedMs = error?.error.code === 'rate_limited' ? retryAfterSecondsOf(error) * 1000 : undefined;
    if (this.#pacing.answered(wireId, rateLimitedMs, Date.now())) this.flush();
  }

  /** The heartbeat sends a ping now. */
  ping(): void {
    this.#idless.push({ kind: 'ping' });
  }

  /**
   * The server answered a ping: the oldest one. A batch sent before it and not refused whole by
   * then was read as a batch (the server answers in order), so it is no longer in doubt.
   */
  pong(): void {
    const at = this.#idless.findIndex((frame) => frame.kind === 'ping');
    if (at !== -1) this.#idless.splice(0, at + 1);
  }

  /** The oldest batch still in doubt, taken off the list with the pings sent before it (answered by now). */
  #oldestBatch(): string[] | undefined {
    const at = this.#idless.findIndex((frame) => frame.kind === 'batch');
    if (at === -1) return undefined;
    const [frame] = this.#idless.splice(0, at + 1).slice(-1);
    return frame?.kind === 'batch' ? frame.ids : undefined;
  }

  /**
   * An `error` frame with no id: the answer to a frame that has none, a ping or a batch. Answers
   * the wire ids of the still wanted subscriptions of a batch it refused whole (`rate_limited`),
   * to be subscribed again after the server's wait; `[]` when it was about batches otherwise (the
   * server does not know them: from now on one `subscribe` each, the unanswered entries first);
   * `null` when it says nothing about subscribes.
   */
  answeredWithoutId(frame: ErrorFrame): string[] | null {
    const { code, details } = frame.error;
    if (code === 'rate_limited') {
      // The principal's frame budget is spent, whichever frame this refused: nothing goes one by one until the wait is over.
      this.#pacing.refused(retryAfterSecondsOf(frame) * 1000, Date.now());
      // The oldest frame without an id is the one refused: a ping (nothing to do), or a batch.
      const oldest = this.#idless.shift();
      if (oldest === undefined || oldest.kind === 'ping') return null;
      const refused = this.#takeBack(oldest.ids);
      this.#logger.warn(
        { refused: refused.length, retryAfterSeconds: retryAfterSecondsOf(frame) },
        'a subscribe_batch was refused whole (rate limited); its subscribes go again after the wait',
      );
      return refused;
    }
    // An unknown frame type has only `type` in its details; a server that knows batches says why it
    // refused one (`limit`, `count`, `index`), and that is not a reason to send them one by one.
    const unknownType = details.type === 'subscribe_batch' && Object.keys(details).length === 1;
    if (code !== 'invalid_request' || !unknownType) {
      // Refused whole for another reason (a server with a smaller batch limit, an internal error): the
      // batch's subscriptions go again after a wait rather than never. Nothing in doubt: not about batches.
      const batch = this.#oldestBatch();
      if (batch === undefined) return null;
      const refused = this.#takeBack(batch);
      this.#logger.warn(
        { refused: refused.length, code, details },
        'a subscribe_batch was refused whole; its subscribes go again after a wait',
      );
      return refused;
    }
    this.#oldestBatch();
    if (!this.#batching) return [];
    this.#batching = false;
    this.#logger.warn(
      { resent: this.#unanswered.size },
      'the server does not take subscribe_batch; subscribing one by one on this socket',
    );
    const resend = [...this.#unanswered.entries()].flatMap(([wireId, subscribe]) =>
      this.#link.isWanted(wireId) ? [subscribe] : [],
    );
    this.#unanswered.clear();
    // The other batches still owe their answers (each read the same way), now about nothing.
    for (const frame of this.#idless) if (frame.kind === 'batch') frame.ids = [];
    this.#waiting = [...resend, ...this.#waiting];
    this.flush();
    return [];
  }

  /** The still wanted subscriptions of a batch refused whole, no longer counted as sent. */
  #takeBack(ids: readonly string[]): string[] {
    return ids.filter((wireId) => this.#unanswered.delete(wireId) && this.#link.isWanted(wireId));
  }

  /** The socket is gone, and what waited with it. The next socket may reach another server (upgraded): batches again. */
  reset(): void {
    this.#waiting = [];
    this.#plan = 0;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastSentAt = Number.NEGATIVE_INFINITY;
    this.#batching = true;
    this.#takesBatches = false;
    this.#unanswered.clear();
    this.#idless = [];
    this.#pacing = new SubscribePacing();
    clearTimeout(this.#pacingTimer);
    this.#pacingTimer = undefined;
  }

  /** One `subscribe` each, as many as the pacing has room for; the rest once it has more. */
  #sendPaced(): void {
    const now = Date.now();
    const sending = this.#waiting.splice(0, this.#pacing.room(now));
    for (const frame of sending) {
      this.#pacing.sent(frame.id);
      this.#link.send(frame);
    }
    if (sending.length > 0) this.#lastSentAt = now;
    const pause = this.#pacing.pausedUntilMs - now;
    // A full window goes on as answers come (`answered`); a pause, once it is over.
    if (this.#waiting.length > 0 && pause > 0 && this.#pacingTimer === undefined) {
      this.#pacingTimer = setTimeout(() => {
        this.#pacingTimer = undefined;
        this.flush();
      }, pause);
    }
  }
}
