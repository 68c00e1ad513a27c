import { LIMITS, type Principal } from '@bubble/protocol';
import { pino, type Logger } from 'pino';
import type { BubbleApiError } from '../client/bubble-api-error.js';
import { staticCredentials } from '../client/credentials.js';
import { combinedState } from './combined-state.js';
import { deriveWsUrl } from './derive-ws-url.js';
import type { BubbleLiveConfig, LiveState } from './live-options.js';
import { LiveSocket, type LiveSocketOwner, type LiveSocketSettings, type StateDetail } from './live-socket.js';
import {
  GrantsSubscription,
  ThreadSubscription,
  type AnyLiveSubscription,
  type SubscribeThreadOptions,
} from './live-subscription.js';
import { nodeWebSocket } from './ws-node.js';

export { GrantsSubscription, ThreadSubscription } from './live-subscription.js';
export { deriveWsUrl } from './derive-ws-url.js';
export type { BubbleLiveConfig, BubbleLiveOptions, LiveState } from './live-options.js';

/**
 * The live connection of one client: its subscriptions, spread over as many WebSockets as they
 * need. The server holds at most `LIMITS.maxSubscriptionsPerSocket` (1,000) subscriptions on one
 * socket, so a client with more opens another socket when every one it has is full (10,000
 * threads: 10 sockets); a socket whose subscriptions have all ended closes, and is opened again
 * when a subscription is placed on it. Each socket is a `LiveSocket`: its own sign-in, heartbeat,
 * reconnect from the last seq, bearer renewal and backpressure; its subscribes go out in batches
 * (`subscription-mux.ts`). A failure no reconnect can fix (4003, a refused credential, a URL no
 * socket opens) is the same for every socket, so it fails them all.
 *
 * The state (`connectionState`, `onStateChange`) is that of the least live socket in use
 * (`combinedState`): with one socket it is that socket's, as it always was. A change is told
 * when it changes that state, or when it comes from a socket in that state (its details: a
 * new delay, another attempt).
 *
 * Sockets come from `webSocketFactory` (`nodeWebSocket`, over `ws`, by default; a browser passes
 * `browserWebSocket`).
 */
export class BubbleLive {
  readonly #config: BubbleLiveConfig;
  readonly #logger: Logger;
  readonly #settings: LiveSocketSettings;
  readonly #bufferLimit: number;
  readonly #sockets: LiveSocket[] = [];
  readonly #owner: LiveSocketOwner;
  #state: LiveState = 'idle';
  #nextLocalId = 0;
  #terminalError: BubbleApiError | undefined;
  /** The principal the server confirmed on the last `server.ready` (of any socket). */
  principal: Principal | undefined;

  constructor(config: BubbleLiveConfig) {
    this.#config = config;
    this.#logger = (config.logger ?? pino({ level: 'silent' })).child({ component: 'bubble-live' });
    this.#bufferLimit = Math.max(2, config.bufferLimit ?? 1_000);
    const token = config.token;
    if (config.credentials === undefined && token === undefined)
      throw new Error('the live connection needs a token or credentials');
    this.#settings = Object.freeze({
      wsUrl: config.wsUrl ?? deriveWsUrl(config.url),
      connectTimeoutMs: config.connectTimeoutMs ?? 10_000,
      reconnectBaseMs: config.reconnectBaseMs ?? 500,
      reconnectCapMs: Math.min(config.reconnectCapMs ?? 30_000, 30_000),
      heartbeatIntervalMs: config.heartbeatIntervalMs ?? 15_000,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs ?? 10_000,
      random: config.random ?? Math.random,
      credentials: config.credentials ?? staticCredentials(token as string),
      webSocketFactory: config.webSocketFactory ?? nodeWebSocket,
    });
    this.#owner = {
      stateChanged: (socket, state, detail) => this.#socketStateChanged(socket, state, detail),
      ready: (principal) => {
        this.principal = principal;
      },
      failed: (error, detail) => this.#fail(error, detail),
    };
  }

  get connectionState(): LiveState {
    return this.#state;
  }

  subscribeThread(threadId: string, options: SubscribeThreadOptions = {}): ThreadSubscription {
    const socket = this.#socketWithRoom();
    const subscription = new ThreadSubscription(
      this.#localId('t'),
      threadId,
      options.afterSeq ?? 0,
      socket.mux,
      this.#logger.child({ threadId }),
      this.#bufferLimit,
      options.signal,
      options.onPresence,
    );
    this.#add(socket, subscription);
    return subscription;
  }

  subscribeGrantsAsIterable(options: { signal?: AbortSignal } = {}): GrantsSubscription {
    const socket = this.#socketWithRoom();
    const subscription = new GrantsSubscription(
      this.#localId('g'),
      socket.mux,
      this.#logger.child({ stream: 'grants' }),
      this.#bufferLimit,
      options.signal,
    );
    this.#add(socket, subscription);
    return subscription;
  }

  /** Ends every subscription (their iterations finish) and closes every socket for good. */
  close(): void {
    if (this.#state === 'closed') return;
    for (const socket of this.#sockets.splice(0)) socket.close();
    this.#setState('closed', {});
  }

  #add(socket: LiveSocket, subscription: AnyLiveSubscription): void {
    if (this.#state === 'closed') {
      subscription.fail(new Error('the live connection is closed'));
      return;
    }
    if (this.#terminalError !== undefined) {
      subscription.fail(this.#terminalError);
      return;
    }
    socket.add(subscription);
  }

  /**
   * The socket a new subscription goes on: the first open one with room, else the first closed
   * one (it opens again), else a new one. The count includes subscriptions waiting to be
   * subscribed again (parked, or after a refusal), so the server is never asked for more.
   */
  #socketWithRoom(): LiveSocket {
    const limit = LIMITS.maxSubscriptionsPerSocket;
    const socket =
      this.#sockets.find((each) => each.state !== 'idle' && each.size < limit) ??
      this.#sockets.find((each) => each.state === 'idle');
    if (socket !== undefined) return socket;
    const added = new LiveSocket(
      this.#settings,
      this.#owner,
      this.#sockets.length === 0 ? this.#logger : this.#logger.child({ socket: this.#sockets.length + 1 }),
    );
    // Closed or failed for good: the subscription placed on it is refused by `#add`, not kept.
    if (this.#state !== 'closed' && this.#terminalError === undefined) this.#sockets.push(added);
    return added;
  }

  #socketStateChanged(socket: LiveSocket, state: LiveState, detail: StateDetail): void {
    if (this.#state === 'closed' || this.#terminalError !== undefined || !this.#sockets.includes(socket)) return;
    const combined = combinedState(this.#sockets.map((each) => each.state));
    if (combined !== this.#state || state === combined) this.#setState(combined, detail);
  }

  /** One socket met a failure that every socket would: they all end, with `error`. */
  #fail(error: BubbleApiError, detail: StateDetail): void {
    if (this.#state === 'closed' || this.#terminalError !== undefined) return;
    this.#terminalError = error;
    for (const socket of this.#sockets.splice(0)) socket.fail(error);
    this.#setState('failed', detail);
  }

  #setState(state: LiveState, detail: StateDetail): void {
    this.#state = state;
    this.#config.onStateChange?.(state, detail);
  }

  #localId(prefix: string): string {
    return `${prefix}${(this.#nextLocalId += 1)}`;
  }
}
