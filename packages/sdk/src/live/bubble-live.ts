import { CLOSE_CODES, ServerFrameSchema, type ClientFrame, type Principal, type ServerFrame } from '@bubble/protocol';
import { pino, type Logger } from 'pino';
import type { BubbleApiError } from '../client/bubble-api-error.js';
import { fullJitterDelay } from '../client/backoff.js';
import { isCredentialsUnavailable, staticCredentials, type Credentials } from '../client/credentials.js';
import { classifyClose } from '../client/retry-classification.js';
import { deriveWsUrl } from './derive-ws-url.js';
import { BearerRenewal } from './bearer-renewal.js';
import { Heartbeat } from './heartbeat.js';
import { refusedCredentialError, unopenableSocketError } from './live-errors.js';
import type { BubbleLiveConfig, LiveState } from './live-options.js';
import {
  GrantsSubscription,
  ThreadSubscription,
  type AnyLiveSubscription,
  type SubscribeThreadOptions,
} from './live-subscription.js';
import { SubscriptionMux } from './subscription-mux.js';
import type { WebSocketFactory, WebSocketLike } from './web-socket-like.js';
import { nodeWebSocket } from './ws-node.js';

export { GrantsSubscription, ThreadSubscription } from './live-subscription.js';
export { deriveWsUrl } from './derive-ws-url.js';
export type { BubbleLiveConfig, BubbleLiveOptions, LiveState } from './live-options.js';

/** The longest wait between two tries to renew a refused bearer while its issuer is unreachable. */
const RENEW_RETRY_CAP_MS = 60_000;
/** Twice the server's frame limit (1 MiB): a frame that big is the server's bug, not ours to read. */
const MAX_PAYLOAD_BYTES = 2 * 1024 * 1024;

type Timer = ReturnType<typeof setTimeout>;

/**
 * One WebSocket per client, multiplexing every subscription. Reconnects on any drop with
 * exponential backoff and full jitter (capped at 30 s), re-creates each subscription where it
 * left off, detects silent dead sockets with a heartbeat, and treats 4003 as terminal. 4001 is
 * terminal too, unless the credentials can be renewed: then the bearer is renewed once and the
 * connection resumes at once (an access token that expired while the socket was open); a second
 * 4001 before the server is ready again is final. A renewal that fails for a passing reason (the
 * identity provider is down: `renew` throws, or has no newer bearer than the refused one) is tried
 * again with backoff (capped at 60 s) while the state says `waiting`, and the socket reconnects
 * once one succeeds; only a definite answer (`renew` gives null) is final. A 4001 saying the
 * server could not reach its identity provider is an ordinary drop: reconnected with backoff.
 * The socket is opened when the first subscription starts and closed when the last one ends.
 *
 * The socket comes from `webSocketFactory` (`nodeWebSocket`, over `ws`, by default; a browser
 * passes `browserWebSocket`): this class speaks only `WebSocketLike`, sends only the protocol's
 * `ClientFrame`s and reads only what `ServerFrameSchema` accepts. The subscriptions themselves,
 * and what happens when a consumer falls behind, are `SubscriptionMux`'s.
 */
export class BubbleLive {
  readonly #config: BubbleLiveConfig;
  readonly #logger: Logger;
  readonly #wsUrl: string;
  readonly #connectTimeoutMs: number;
  readonly #reconnectBaseMs: number;
  readonly #reconnectCapMs: number;
  readonly #bufferLimit: number;
  readonly #random: () => number;
  readonly #credentials: Credentials;
  readonly #webSocketFactory: WebSocketFactory;
  readonly #mux: SubscriptionMux;

  #state: LiveState = 'idle';
  #socket: WebSocketLike | undefined;
  #attempt = 0;
  #nextLocalId = 0;
  #reconnectTimer: Timer | undefined;
  #readyTimer: Timer | undefined;
  readonly #heartbeat: Heartbeat;
  #terminalError: BubbleApiError | undefined;
  readonly #renewal: BearerRenewal;
  /** The principal the server confirmed on the last `server.ready`. */
  principal: Principal | undefined;

  constructor(config: BubbleLiveConfig) {
    this.#config = config;
    this.#logger = (config.logger ?? pino({ level: 'silent' })).child({ component: 'bubble-live' });
    this.#wsUrl = config.wsUrl ?? deriveWsUrl(config.url);
    this.#connectTimeoutMs = config.connectTimeoutMs ?? 10_000;
    this.#reconnectBaseMs = config.reconnectBaseMs ?? 500;
    this.#reconnectCapMs = Math.min(config.reconnectCapMs ?? 30_000, 30_000);
    this.#bufferLimit = Math.max(2, config.bufferLimit ?? 1_000);
    this.#random = config.random ?? Math.random;
    this.#webSocketFactory = config.webSocketFactory ?? nodeWebSocket;
    const token = config.token;
    if (config.credentials === undefined && token === undefined)
      throw new Error('the live connection needs a token or credentials');
    this.#credentials = config.credentials ?? staticCredentials(token as string);
    this.#renewal = new BearerRenewal(
      this.#credentials,
      { baseMs: Math.max(this.#reconnectBaseMs, 1_000), capMs: RENEW_RETRY_CAP_MS },
      this.#random,
    );
    this.#heartbeat = new Heartbeat(
      config.heartbeatIntervalMs ?? 15_000,
      config.heartbeatTimeoutMs ?? 10_000,
      () => this.#send({ type: 'ping' }),
      () => {
        this.#logger.warn('no answer to ping; the connection is dead, reconnecting');
        this.#socket?.terminate();
      },
    );
    this.#mux = new SubscriptionMux(
      {
        send: (frame) => this.#send(frame),
        isReady: () => this.#state === 'ready',
        pauseReading: () => this.#pauseReading(),
        resumeReading: () => this.#resumeReading(),
        served: () => {
          this.#attempt = 0;
        },
        emptied: () => this.#goIdle(),
      },
      this.#logger,
      { baseMs: this.#reconnectBaseMs, capMs: this.#reconnectCapMs },
      this.#random,
    );
  }

  get connectionState(): LiveState {
    return this.#state;
  }

  subscribeThread(threadId: string, options: SubscribeThreadOptions = {}): ThreadSubscription {
    const subscription = new ThreadSubscription(
      this.#localId('t'),
      threadId,
      options.afterSeq ?? 0,
      this.#mux,
      this.#logger.child({ threadId }),
      this.#bufferLimit,
      options.signal,
      options.onPresence,
    );
    this.#add(subscription);
    return subscription;
  }

  subscribeGrantsAsIterable(options: { signal?: AbortSignal } = {}): GrantsSubscription {
    const subscription = new GrantsSubscription(
      this.#localId('g'),
      this.#mux,
      this.#logger.child({ stream: 'grants' }),
      this.#bufferLimit,
      options.signal,
    );
    this.#add(subscription);
    return subscription;
  }

  /** Ends every subscription (their iterations finish) and closes the socket for good. */
  close(): void {
    if (this.#state === 'closed') return;
    this.#mux.endAll({ kind: 'closed' });
    this.#teardown('closed by the client');
    this.#setState('closed', {});
  }

  // Connection lifecycle.

  #add(subscription: AnyLiveSubscription): void {
    if (this.#state === 'closed') {
      subscription.fail(new Error('the live connection is closed'));
      return;
    }
    if (this.#terminalError !== undefined) {
      subscription.fail(this.#terminalError);
      return;
    }
    this.#mux.add(subscription);
    if (this.#state === 'idle') this.#connect();
  }

  #connect(): void {
    this.#setState('connecting', { attempt: this.#attempt });
    let socket: WebSocketLike;
    try {
      socket = this.#webSocketFactory(
        this.#wsUrl,
        {
          onOpen: () => {
            void this.#authenticate(socket);
          },
          onMessage: (frame) => {
            if (socket !== this.#socket) return;
            this.#heartbeat.seen();
            if (frame.kind === 'binary') this.#logger.warn('binary frame ignored');
            else this.#onFrame(frame.text);
          },
          onError: (error) => {
            this.#logger.debug({ err: error }, 'socket error');
          },
          onClose: (code, reason) => {
            if (socket === this.#socket) this.#onClose(code, reason);
          },
        },
        { handshakeTimeoutMs: this.#connectTimeoutMs, maxPayloadBytes: MAX_PAYLOAD_BYTES },
      );
    } catch (error) {
      // Only a malformed URL gets here: nothing a retry would fix.
      this.#terminalError = unopenableSocketError(this.#wsUrl, error);
      this.#mux.failAll(this.#terminalError);
      this.#setState('failed', {});
      return;
    }
    this.#socket = socket;
    this.#readyTimer = setTimeout(() => {
      this.#logger.warn({ timeoutMs: this.#connectTimeoutMs }, 'no server.ready in time; reconnecting');
      socket.terminate();
    }, this.#connectTimeoutMs);
  }

  async #authenticate(socket: WebSocketLike): Promise<void> {
    let token: string;
    try {
      token = await this.#credentials.current();
    } catch (error) {
      if (socket !== this.#socket) return;
      this.#socket = undefined;
      socket.terminate();
      if (isCredentialsUnavailable(error)) {
        // No bearer for now (the identity provider is unreachable): an ordinary drop, retried.
        this.#logger.warn({ err: error }, 'no bearer for the live connection for now; trying again');
        this.#onClose(1013, `no bearer for now: ${error.message}`);
        return;
      }
      // The credentials have no bearer to give (signed out): as final as a refused one.
      this.#logger.warn({ err: error }, 'no bearer for the live connection');
      this.#renewal.forgo();
      this.#onClose(
        CLOSE_CODES.notAuthenticated,
        `no bearer: ${error instanceof Error ? error.message : String(error)}`,
      );
      return;
    }
    if (socket !== this.#socket || !socket.isOpen) return;
    this.#renewal.sentBearer(token);
    this.#sendOn(socket, { type: 'client.auth', token });
  }

  #onFrame(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.#logger.warn('frame that is not JSON ignored');
      return;
    }
    const parsed = ServerFrameSchema.safeParse(json);
    if (!parsed.success) {
      this.#logger.debug({ type: (json as { type?: unknown })?.type }, 'unknown or malformed frame ignored');
      return;
    }
    this.#handle(parsed.data);
  }

  #handle(frame: ServerFrame): void {
    switch (frame.type) {
      case 'server.ready': {
        clearTimeout(this.#readyTimer);
        this.principal = frame.principal;
        this.#renewal.ready();
        // The backoff is reset only once a subscription is served (`MuxLink.served`), so a server
        // that accepts and then drops every connection still sees the delays grow.
        this.#setState('ready', {});
        this.#heartbeat.start();
        this.#mux.subscribeAll();
        return;
      }
      case 'pong':
        // Any frame is a sign of life (counted on arrival); a pong says nothing more.
        return;
      case 'subscribed':
      case 'event':
      case 'grant':
      case 'grants_synced':
      case 'subscription_ended':
      case 'error':
      case 'presence':
        this.#mux.route(frame);
        return;
      default:
        // Frames come through ServerFrameSchema, so this is unreachable; a frame that slipped past is logged, not thrown.
        this.#logger.debug({ frame: frame satisfies never }, 'unhandled frame');
    }
  }

  #onClose(code: number, reason: string): void {
    this.#stopTimers();
    this.#socket = undefined;
    this.#mux.socketLost();
    const verdict = classifyClose(code, reason);
    if (verdict === 'refused' && this.#renewal.available && this.#mux.size > 0) {
      this.#renewAndReconnect(code, reason);
      return;
    }
    if (verdict !== 'reconnect') {
      this.#terminalError = refusedCredentialError(code, reason);
      this.#logger.error({ code, reason }, 'live connection refused the credential; not reconnecting');
      this.#mux.failAll(this.#terminalError);
      this.#setState('failed', { code, reason });
      return;
    }
    if (this.#mux.size === 0) {
      this.#setState('idle', { code, reason });
      return;
    }
    const delayMs = fullJitterDelay(
      this.#attempt,
      { baseMs: this.#reconnectBaseMs, capMs: this.#reconnectCapMs },
      this.#random,
    );
    this.#attempt += 1;
    this.#logger.warn({ code, reason, attempt: this.#attempt, delayMs }, 'live connection lost; reconnecting');
    this.#setState('waiting', { attempt: this.#attempt, delayMs, code, reason });
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (this.#mux.size > 0 && this.#state === 'waiting') this.#connect();
      else if (this.#state === 'waiting') this.#setState('idle', {});
    }, delayMs);
  }

  /**
   * The server refused the bearer (most often: it expired while the socket was open). Renewed
   * once, the connection opens again at once; every subscription resumes from its last seq. A
   * renewal that fails for a passing reason is tried again after a backoff (60 s at most).
   */
  #renewAndReconnect(code: number, reason: string): void {
    this.#logger.info({ code, reason }, 'the server refused the bearer; renewing it');
    this.#setState('waiting', { attempt: this.#attempt, delayMs: 0, code, reason });
    void this.#renewal.renew().then((outcome) => {
      // Closed, or a socket opened meanwhile: this renewal is no longer awaited.
      if (this.#state !== 'waiting' || this.#socket !== undefined) return;
      if (outcome.kind === 'final') {
        this.#onClose(code, reason);
        return;
      }
      if (this.#mux.size === 0) {
        this.#setState('idle', {});
        return;
      }
      if (outcome.kind === 'renewed') {
        this.#connect();
        return;
      }
      const { delayMs, attempt } = this.#renewal.nextRetry();
      this.#logger.warn({ err: outcome.why, attempt, delayMs }, 'renewing the bearer failed for now; trying again');
      this.#setState('waiting', { attempt, delayMs, code, reason });
      clearTimeout(this.#reconnectTimer);
      this.#reconnectTimer = setTimeout(() => {
        this.#reconnectTimer = undefined;
        if (this.#state === 'waiting' && this.#socket === undefined) this.#renewAndReconnect(code, reason);
      }, delayMs);
    });
  }

  /** `MuxLink.pauseReading`: stops reading where the transport can (the heartbeat could not hear its pong). */
  #pauseReading(): boolean {
    const flowControl = this.#socket?.flowControl;
    if (flowControl === undefined) return false;
    this.#heartbeat.stop();
    flowControl.pause();
    return true;
  }

  #resumeReading(): void {
    const flowControl = this.#socket?.flowControl;
    if (flowControl === undefined) return;
    flowControl.resume();
    this.#heartbeat.start();
  }

  #stopTimers(): void {
    this.#heartbeat.stop();
    clearTimeout(this.#readyTimer);
    clearTimeout(this.#reconnectTimer);
    this.#readyTimer = undefined;
    this.#reconnectTimer = undefined;
  }

  #goIdle(): void {
    this.#teardown('no subscriptions left');
    this.#setState('idle', {});
  }

  #teardown(reason: string): void {
    this.#stopTimers();
    const socket = this.#socket;
    this.#socket = undefined;
    this.#mux.socketLost();
    if (socket !== undefined) {
      if (socket.isOpen) socket.close(1000, reason);
      else socket.terminate();
    }
  }

  /** Sends on the current socket, if it is open. */
  #send(frame: ClientFrame): void {
    const socket = this.#socket;
    if (socket !== undefined) this.#sendOn(socket, frame);
  }

  #sendOn(socket: WebSocketLike, frame: ClientFrame): void {
    if (socket.isOpen) socket.send(JSON.stringify(frame));
  }

  #setState(state: LiveState, detail: { attempt?: number; delayMs?: number; code?: number; reason?: string }): void {
    this.#state = state;
    this.#config.onStateChange?.(state, detail);
  }

  #localId(prefix: string): string {
    return `${prefix}${(this.#nextLocalId += 1)}`;
  }
}
