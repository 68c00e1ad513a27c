import type { EventEnvelope } from '@bubble/protocol';
import { CLOSE_CODES } from '@bubble/protocol';
import type { LiveBusMessage } from '../live/live-bus.js';
import type { Connection } from './connection.js';
import type { ThreadSubscription } from './thread-subscription.js';

/** How long the frames of one flush hold back the next flush, per frame written. */
const HOLD_PER_FRAME_MS = 0.05;

/**
 * The routing tables of the WebSocket layer, and the one place that turns
 * live-bus messages into work for sockets:
 *
 * - events go to the subscriptions of their thread; each event is serialized
 *   once per batch and the string reused for every subscriber;
 * - grant changes go to the sockets of the grant's principal;
 * - token revocations close the sockets authenticated with those tokens.
 *
 * Writes are coalesced. Sockets that got frames in a turn are flushed together
 * at its end (a microtask), one corked burst (one `writev`) each. After a big
 * flush the next one waits a little: `HOLD_PER_FRAME_MS` per frame just
 * written, at most `maxFlushIntervalMs`. So one event to one socket goes out
 * at once, while 1,000 events/s to 100 sockets are written a few events per
 * syscall instead of one: the syscalls are where fan-out spends its time, and
 * the time they free is what the appends that feed it need.
 */
export class WsHub {
  private readonly threadSubscriptions = new Map<string, Set<ThreadSubscription>>();
  private readonly byPrincipal = new Map<string, Set<Connection>>();
  private readonly byToken = new Map<string, Set<Connection>>();
  /** Sockets whose `authenticate` call is in flight. */
  readonly authenticating = new Set<Connection>();
  private dirty: Connection[] = [];
  private flushScheduled = false;
  private nextFlushAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly maxFlushIntervalMs = 0,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  private readonly flushAll = (): void => {
    this.flushScheduled = false;
    const dirty = this.dirty;
    this.dirty = [];
    let frames = 0;
    for (const connection of dirty) {
      try {
        frames += connection.flush();
      } catch (error) {
        // One broken socket must not hold back the others.
        connection.close(1011, 'write failed');
        this.onError(error);
      }
    }
    this.nextFlushAt = performance.now() + Math.min(this.maxFlushIntervalMs, frames * HOLD_PER_FRAME_MS);
  };

  dispatch(message: LiveBusMessage): void {
    switch (message.kind) {
      case 'events':
        this.dispatchEvents(message.threadId, message.events);
        return;
      case 'grant': {
        const connections = this.byPrincipal.get(message.grant.principalId);
        if (connections === undefined) return;
        for (const connection of [...connections]) connection.onGrantChange(message.change, message.grant);
        return;
      }
      case 'tokens_revoked': {
        for (const connection of this.authenticating) connection.noteRevokedWhileAuthenticating(message.tokenIds);
        for (const tokenId of message.tokenIds) {
          const connections = this.byToken.get(tokenId);
          if (connections === undefined) continue;
          for (const connection of [...connections]) connection.close(CLOSE_CODES.credentialRevoked, 'credential revoked');
        }
        return;
      }
      default: {
        const unreachable: never = message;
        throw new Error(`unknown live bus message ${JSON.stringify(unreachable)}`);
      }
    }
  }

  scheduleFlush(connection: Connection): void {
    this.dirty.push(connection);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    const wait = this.nextFlushAt - performance.now();
    if (wait <= 0) queueMicrotask(this.flushAll);
    else setTimeout(this.flushAll, wait);
  }

  addConnection(connection: Connection): void {
    addTo(this.byPrincipal, connection.principalId, connection);
    if (connection.tokenId !== null) addTo(this.byToken, connection.tokenId, connection);
  }

  removeConnection(connection: Connection): void {
    removeFrom(this.byPrincipal, connection.principalId, connection);
    if (connection.tokenId !== null) removeFrom(this.byToken, connection.tokenId, connection);
  }

  addThreadSubscription(subscription: ThreadSubscription): void {
    addTo(this.threadSubscriptions, subscription.threadId, subscription);
  }

  removeThreadSubscription(subscription: ThreadSubscription): void {
    removeFrom(this.threadSubscriptions, subscription.threadId, subscription);
  }

  private dispatchEvents(threadId: string, events: readonly EventEnvelope[]): void {
    const subscriptions = this.threadSubscriptions.get(threadId);
    if (subscriptions === undefined || events.length === 0) return;
    const jsons = events.map((event) => JSON.stringify(event));
    for (const subscription of subscriptions) subscription.onLiveEvents(events, jsons);
  }
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (set === undefined) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (set === undefined) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
