import type { EventEnvelope, Grant, GrantChange } from '@bubble/protocol';
import { assertNever, CLOSE_CODES } from '@bubble/protocol';
import type { LiveBusMessage } from '../live/live-bus.js';
import type { PresenceRegistry } from '../presence/presence-registry.js';
import { JoinedFrames, LiveBatch } from './live-batch.js';

/** A socket as the hub sees it: whose it is, and what the hub tells it (`connection.ts` is the one). */
export interface HubConnection {
  readonly principalId: string;
  readonly tokenId: string | null;
  close(code: number, reason: string): void;
  flush(joined?: JoinedFrames): void;
  onGrantChange(change: GrantChange, grant: Grant): void;
  noteRevokedWhileAuthenticating(tokenIds: readonly string[]): void;
  isJwtIssuedBefore(issuedBefore: number): boolean;
  noteJwtsRevokedWhileAuthenticating(principalId: string, issuedBefore: number): void;
}

/** A live thread subscription as the hub sees it (`thread-subscription.ts` is the one). */
export interface HubSubscription {
  readonly threadId: string;
  /** The hub's presence mark when it joined: changes before it are in its first read. */
  presenceFrom: number;
  onPresence(principalId: string, online: boolean): void;
  onLiveEvents(batch: LiveBatch): void;
}

/** How long a flush holds back the next one, as a multiple of the time it took (exported for the bench's relay baseline). */
export const HOLD_PER_FLUSH_TIME = 1;

/**
 * The routing tables of the WebSocket layer, and the one place that turns
 * live-bus messages into work for sockets:
 *
 * - events go to the subscriptions of their thread; each event is serialized
 *   once per batch, and its frame encoded once per subscription id, the bytes
 *   reused for every subscriber (`live-batch.ts`);
 * - grant changes go to the sockets of the grant's principal;
 * - a principal's first authenticated socket and its last one are told to the presence registry
 *   (`presence` frames are sent by `presence-fanout.ts`, through `presenceOnThread`);
 * - token revocations close the sockets authenticated with those tokens, and
 *   the end of a person's JWTs (`jwts_revoked`) those of their sockets whose
 *   JWT was issued before it.
 *
 * Writes are coalesced. Sockets that got frames in a turn are flushed together
 * at its end (a microtask), one write each. The next flush then waits as long
 * as this one took (at most `maxFlushIntervalMs`), so socket writes never take
 * more than about half of a busy event loop: a lone event, or a few sockets, go
 * out at once, while heavy fan-out (many sockets, many events) is written many
 * frames per syscall, and the time saved is what the appends that feed it need.
 * On this 2-core VM a write to a loopback socket costs about 6.5 µs plus 0.5 µs
 * per 280-byte frame it carries, so at 1,000 subscribers and 1,000 events/s
 * (1,000,000 frames/s) the frames per write decide whether the server keeps up.
 * Measured there (`bench:server` growth fan-out, 2 rounds each, commits synced
 * off the loop): a hold of 1x the flush time, at most 20 ms, gave p99 68 / 174
 * ms at 0.69-0.77 µs a frame; 0.5x at most 20 ms, 253 / 200 ms; 0.5x at most
 * 5 ms (the earlier setting), 497 / 2,015 ms at 0.77-0.83 µs. At 100
 * subscribers the three gave p99 34 / 22, 31 / 123 and 48 / 337 ms.
 */
export class WsHub {
  readonly #threadSubscriptions = new Map<string, Set<HubSubscription>>();
  readonly #byPrincipal = new Map<string, Set<HubConnection>>();
  readonly #byToken = new Map<string, Set<HubConnection>>();
  /** Sockets whose `authenticate` call is in flight. */
  readonly authenticating = new Set<HubConnection>();
  #dirty: HubConnection[] = [];
  /** The last presence mark taken (see `presence-fanout.ts`). */
  #presenceMark = 0;
  #flushScheduled = false;
  #nextFlushAt = Number.NEGATIVE_INFINITY;
  readonly #maxFlushIntervalMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #presence: PresenceRegistry | undefined;

  constructor(maxFlushIntervalMs = 0, onError: (error: unknown) => void = () => {}, presence?: PresenceRegistry) {
    this.#maxFlushIntervalMs = maxFlushIntervalMs;
    this.#onError = onError;
    this.#presence = presence;
  }

  readonly #flushAll = (): void => {
    this.#flushScheduled = false;
    const dirty = this.#dirty;
    this.#dirty = [];
    const startedAt = performance.now();
    const joined = new JoinedFrames();
    for (const connection of dirty) {
      try {
        connection.flush(joined);
      } catch (error) {
        // One broken socket must not hold back the others.
        connection.close(1011, 'write failed');
        this.#onError(error);
      }
    }
    const finishedAt = performance.now();
    this.#nextFlushAt = finishedAt + Math.min(this.#maxFlushIntervalMs, (finishedAt - startedAt) * HOLD_PER_FLUSH_TIME);
  };

  dispatch(message: LiveBusMessage): void {
    switch (message.kind) {
      case 'events':
        this.#dispatchEvents(message.threadId, message.events);
        return;
      case 'grant': {
        const connections = this.#byPrincipal.get(message.grant.principalId);
        if (connections === undefined) return;
        for (const connection of [...connections]) connection.onGrantChange(message.change, message.grant);
        return;
      }
      case 'tokens_revoked': {
        for (const connection of this.authenticating) connection.noteRevokedWhileAuthenticating(message.tokenIds);
        for (const tokenId of message.tokenIds) {
          const connections = this.#byToken.get(tokenId);
          if (connections === undefined) continue;
          for (const connection of [...connections])
            connection.close(CLOSE_CODES.credentialRevoked, 'credential revoked');
        }
        return;
      }
      case 'jwts_revoked': {
        const issuedBefore = Date.parse(message.issuedBefore);
        for (const connection of this.authenticating)
          connection.noteJwtsRevokedWhileAuthenticating(message.principalId, issuedBefore);
        for (const connection of [...(this.#byPrincipal.get(message.principalId) ?? [])]) {
          if (connection.isJwtIssuedBefore(issuedBefore))
            connection.close(CLOSE_CODES.credentialRevoked, 'credential revoked');
        }
        return;
      }
      case 'principal_updated':
        // A socket's principal is what `server.ready` showed; a rename reaches clients through the HTTP API.
        return;
      case 'presence':
        // Another instance's sockets: `cluster/cluster-presence.ts` tells the registry, whose changes come back as `presenceOnThread`.
        return;
      default:
        assertNever(message, 'live bus message');
    }
  }

  scheduleFlush(connection: HubConnection): void {
    this.#dirty.push(connection);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    const wait = this.#nextFlushAt - performance.now();
    if (wait <= 0) queueMicrotask(this.#flushAll);
    else setTimeout(this.#flushAll, wait);
  }

  /** An authenticated socket; the first of its principal makes the principal online. */
  addConnection(connection: HubConnection): void {
    const first = !this.#byPrincipal.has(connection.principalId);
    addTo(this.#byPrincipal, connection.principalId, connection);
    if (connection.tokenId !== null) addTo(this.#byToken, connection.tokenId, connection);
    if (first) this.#presence?.setLocal(connection.principalId, true);
  }

  /** An authenticated socket closed (any code: 4001, 4003, 4008, shutdown); the last of its principal makes it offline here. */
  removeConnection(connection: HubConnection): void {
    removeFrom(this.#byPrincipal, connection.principalId, connection);
    if (connection.tokenId !== null) removeFrom(this.#byToken, connection.tokenId, connection);
    if (!this.#byPrincipal.has(connection.principalId)) this.#presence?.setLocal(connection.principalId, false);
  }

  /** Whether any thread subscription is live on this instance. */
  servesThreads(): boolean {
    return this.#threadSubscriptions.size > 0;
  }

  /**
   * One presence change (of mark `at`), to every live subscription of the thread that joined
   * before it (and, with `joinedAfter`, not before that mark).
   */
  presenceOnThread(
    threadId: string,
    principalId: string,
    online: boolean,
    at: number,
    joinedAfter = Number.NEGATIVE_INFINITY,
  ): void {
    const subscriptions = this.#threadSubscriptions.get(threadId);
    if (subscriptions === undefined) return;
    for (const subscription of [...subscriptions])
      if (subscription.presenceFrom < at && subscription.presenceFrom >= joinedAfter)
        subscription.onPresence(principalId, online);
  }

  addThreadSubscription(subscription: HubSubscription): void {
    subscription.presenceFrom = this.#presenceMark;
    addTo(this.#threadSubscriptions, subscription.threadId, subscription);
  }

  /** A presence change happens now: its mark, later than what every subscription joined at. */
  markPresence(): number {
    this.#presenceMark += 1;
    return this.#presenceMark;
  }

  removeThreadSubscription(subscription: HubSubscription): void {
    removeFrom(this.#threadSubscriptions, subscription.threadId, subscription);
  }

  #dispatchEvents(threadId: string, events: readonly EventEnvelope[]): void {
    const subscriptions = this.#threadSubscriptions.get(threadId);
    if (subscriptions === undefined || events.length === 0) return;
    const batch = new LiveBatch(events);
    for (const subscription of subscriptions) subscription.onLiveEvents(batch);
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
