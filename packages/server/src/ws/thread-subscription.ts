import type { EventEnvelope, SubscribeFrame } from '@bubble/protocol';
import { SUBSCRIPTION_END_REASONS } from '@bubble/protocol';
import { EVENT_FRAME_SUFFIX, errorFrame, eventFramePrefix, serializeFrame } from './frame-codec.js';
import type { SubscriptionHost } from './subscription-host.js';
import type { LiveBatch } from './live-batch.js';
import type { ReadAccess } from '../domain/access-rules.js';
import type { ThreadWatch } from '../live/live-bus.js';

/**
 * Live events held while the backlog is read (or access is re-checked): at
 * most this many, and at most the socket's `maxBufferedBytes` of JSON. Past
 * either, the held events are dropped and read from the store instead.
 */
const MAX_PENDING_EVENTS = 4096;
/**
 * Events per backlog read. A page is held while it is written out, and a
 * socket reads one page at a time across all its subscriptions, so a socket
 * holds at most this many events (64 KiB of data each at most) of backlog.
 */
const BACKLOG_PAGE_EVENTS = 100;

type Mode = 'checking' | 'catching_up' | 'buffering' | 'live' | 'ended';

/**
 * One `subscribe` on one socket: the backlog from the store, then live events
 * from the bus, in seq order with no gap and no duplicate.
 *
 * The subscription joins the live index before its first store read, so every
 * event committed after that read is either in the read or in `pending`.
 * `lastSeq` (the last seq sent) is the single source of truth: anything at or
 * below it is a duplicate, anything above `lastSeq + 1` is a gap, and a gap is
 * closed by reading the store again (the log is durable, so nothing is lost).
 */
export class ThreadSubscription {
  readonly kind = 'thread';
  readonly id: string;
  readonly threadId: string;
  readonly #prefix: string;
  #lastSeq: number;
  #mode: Mode = 'checking';
  #confirmed = false;
  /** Access re-checks in flight; while any is, live events are held, not sent. */
  #holds = 0;
  #pending: Array<{ seq: number; json: string }> = [];
  #pendingBytes = 0;
  #overflowed = false;
  #watch: ThreadWatch | null = null;
  /** The presence mark taken when this subscription joined the hub: it is told only later changes. */
  presenceFrom = Number.POSITIVE_INFINITY;
  /** Presence changes held until `subscribed` is sent, or while access is re-checked: the last word per principal. */
  #heldPresence: Map<string, boolean> | null = null;
  readonly #connection: SubscriptionHost;

  constructor(connection: SubscriptionHost, frame: SubscribeFrame) {
    this.#connection = connection;
    this.id = frame.id;
    this.threadId = frame.threadId;
    this.#lastSeq = frame.afterSeq;
    this.#prefix = eventFramePrefix(frame.id);
  }

  get ended(): boolean {
    return this.#mode === 'ended';
  }

  async start(): Promise<void> {
    const { deps } = this.#connection.context;
    let access: ReadAccess;
    try {
      access = await deps.readAccess(this.#connection.principalId, this.threadId);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (this.ended) return;
    if (access !== 'read') {
      this.#connection.forgetSubscription(this);
      this.#mode = 'ended';
      // The same answers as HTTP: 404's code for no such thread, 403's for no read access.
      const message =
        access === 'not_found'
          ? `thread ${this.threadId} not found`
          : `${this.#connection.principalId} may not read thread ${this.threadId}`;
      this.#connection.sendControl(errorFrame(access, message, this.id, { threadId: this.threadId }));
      return;
    }
    this.#connection.context.hub.addThreadSubscription(this);
    this.#mode = 'catching_up';
    // On a database shared by several instances, events of this thread are published here only
    // once the bus knows the thread is served and has read its head: the backlog is read after that.
    this.#watch = deps.bus.watchThread(this.threadId);
    try {
      await this.#watch.ready;
    } catch (error) {
      this.#fail(error);
      return;
    }
    await this.#catchUp();
  }

  /** Called by the hub for every committed batch of this thread, in seq order. */
  onLiveEvents(batch: LiveBatch): void {
    if (this.#mode === 'live' && this.#holds === 0) {
      this.#deliverLive(batch, 0);
      return;
    }
    if (this.#mode === 'ended' || this.#mode === 'checking') return;
    this.#hold(batch, 0);
  }

  /**
   * A participant of this thread came online or went offline (`presence-fanout.ts`). Sent at once
   * once `subscribed` is, never before it and never while access is being re-checked: held until
   * then (and dropped if access is gone). Never about the subscriber itself: holding this socket,
   * it is online (its own first socket's news would only race with its own subscribe).
   */
  onPresence(principalId: string, online: boolean): void {
    if (this.ended || principalId === this.#connection.principalId) return;
    if (!this.#confirmed || this.#holds > 0) {
      (this.#heldPresence ??= new Map()).set(principalId, online);
      return;
    }
    this.#sendPresence(principalId, online);
  }

  #sendPresence(principalId: string, online: boolean): void {
    this.#connection.sendControl(serializeFrame({ type: 'presence', id: this.id, principalId, online }));
  }

  #releasePresence(): void {
    const held = this.#heldPresence;
    if (held === null || !this.#confirmed || this.#holds > 0) return;
    this.#heldPresence = null;
    for (const [principalId, online] of held) {
      if (this.ended) return;
      this.#sendPresence(principalId, online);
    }
  }

  /** Access may have been lost (a grant of this principal was revoked): check again, holding live events meanwhile. */
  async recheck(): Promise<void> {
    if (this.ended) return;
    this.#holds += 1;
    if (this.#mode === 'live') {
      this.#mode = 'buffering';
      this.#dropPending();
    }
    let readable: boolean;
    try {
      readable =
        (await this.#connection.context.deps.readAccess(this.#connection.principalId, this.threadId)) === 'read';
    } catch (error) {
      this.#fail(error);
      return;
    }
    this.#holds -= 1;
    if (this.ended) return;
    if (!readable) {
      this.end(SUBSCRIPTION_END_REASONS.grantRevoked);
      return;
    }
    this.#releasePresence();
    if (this.#holds === 0 && this.#mode === 'buffering') await this.#catchUp();
  }

  /** Ends the subscription; with a reason, tells the client. */
  end(reason?: string): void {
    if (this.ended) return;
    this.#mode = 'ended';
    this.#dropPending();
    this.#heldPresence = null;
    this.#watch?.release();
    this.#connection.context.hub.removeThreadSubscription(this);
    this.#connection.forgetSubscription(this);
    if (reason !== undefined) {
      this.#connection.sendControl(serializeFrame({ type: 'subscription_ended', id: this.id, reason }));
    }
  }

  #deliverLive(batch: LiveBatch, from: number): void {
    const { events } = batch;
    for (let i = from; i < events.length; i += 1) {
      const seq = (events[i] as EventEnvelope).seq;
      if (seq <= this.#lastSeq) continue;
      if (seq !== this.#lastSeq + 1) {
        // A gap: never skip ahead. Hold the rest and fill the gap from the store.
        this.#hold(batch, i);
        this.#connection.track(this.#catchUp());
        return;
      }
      if (!this.#connection.sendLive(batch.frame(this.#prefix, i))) return;
      this.#lastSeq = seq;
    }
  }

  #hold(batch: LiveBatch, from: number): void {
    if (this.#mode === 'live') this.#mode = 'catching_up';
    const { events, jsons } = batch;
    for (let i = from; i < events.length; i += 1) {
      const seq = (events[i] as EventEnvelope).seq;
      if (seq <= this.#lastSeq) continue;
      const json = jsons[i] as string;
      // Held events of all the socket's subscriptions share one bound; past it this one's are read from the store instead.
      if (
        this.#pending.length >= MAX_PENDING_EVENTS ||
        this.#connection.heldBytes + json.length > this.#connection.context.maxBufferedBytes
      ) {
        this.#dropPending();
        this.#overflowed = true;
      }
      this.#pending.push({ seq, json });
      this.#pendingBytes += json.length;
      this.#connection.heldBytes += json.length;
    }
  }

  #dropPending(): void {
    this.#connection.heldBytes -= this.#pendingBytes;
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #running = false;

  /**
   * Reads the store from `lastSeq` until caught up, then joins the live
   * stream through the held events. One loop at a time per subscription; the
   * `finally` clears `running` in the same turn as the loop's last decision,
   * so a re-check that finishes right after can start the next loop.
   */
  async #catchUp(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      this.#mode = 'catching_up';
      for (;;) {
        if (this.ended) return;
        if (this.#holds > 0) {
          this.#mode = 'buffering';
          return;
        }
        const outcome = await this.#connection.backlogTurn(() => this.#sendPage());
        if (outcome === 'stop') return;
        if (outcome === 'more') continue;

        // Caught up with the store as of that read: join the live stream through what was held.
        const held = this.#pending;
        this.#dropPending();
        if (this.#overflowed) {
          this.#overflowed = false;
          continue;
        }
        let gap = false;
        for (const item of held) {
          if (item.seq <= this.#lastSeq) continue;
          if (item.seq !== this.#lastSeq + 1) {
            gap = true;
            break;
          }
          if (!this.#connection.sendLive(this.#prefix + item.json + EVENT_FRAME_SUFFIX)) return;
          this.#lastSeq = item.seq;
        }
        if (gap) continue;
        if (this.#holds > 0) {
          this.#mode = 'buffering';
          return;
        }
        this.#mode = 'live';
        return;
      }
    } catch (error) {
      this.#fail(error);
    } finally {
      this.#running = false;
    }
  }

  /**
   * One backlog page: read from `lastSeq`, written out at the socket's pace.
   * Runs in the socket's backlog turn, so one page is in hand per socket.
   */
  async #sendPage(): Promise<'stop' | 'more' | 'caught_up'> {
    if (this.ended) return 'stop';
    if (this.#holds > 0) {
      this.#mode = 'buffering';
      return 'stop';
    }
    const page = await this.#connection.context.deps.readEvents(this.threadId, this.#lastSeq, BACKLOG_PAGE_EVENTS);
    if (this.ended) return 'stop';
    if (this.#holds > 0) {
      this.#mode = 'buffering';
      return 'stop';
    }
    if (!this.#confirmed) {
      this.#confirmed = true;
      this.#connection.sendControl(serializeFrame({ type: 'subscribed', id: this.id, headSeq: page.headSeq }));
      this.#releasePresence();
    }
    for (const event of page.events) {
      if (event.seq <= this.#lastSeq) continue;
      if (event.seq !== this.#lastSeq + 1) break; // the store never has gaps; if it ever did, re-read
      this.#connection.sendPaced(this.#prefix + JSON.stringify(event) + EVENT_FRAME_SUFFIX);
      this.#lastSeq = event.seq;
      if (this.#connection.needsDrain()) {
        await this.#connection.drained();
        if (this.ended) return 'stop';
        if (this.#holds > 0) {
          this.#mode = 'buffering';
          return 'stop';
        }
      }
    }
    return page.events.length > 0 && this.#lastSeq < page.headSeq ? 'more' : 'caught_up';
  }

  #fail(error: unknown): void {
    if (this.ended) return;
    this.#connection.context.deps.logger.error(
      { err: error, threadId: this.threadId, subscriptionId: this.id },
      'thread subscription failed',
    );
    this.end();
    this.#connection.sendControl(
      errorFrame('internal', 'the subscription failed; subscribe again from your last seq', this.id),
    );
  }
}
