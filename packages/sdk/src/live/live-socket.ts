import { CLOSE_CODES, ServerFrameSchema, type ClientFrame, type Principal, type ServerFrame } from '@bubble/protocol';
import type { Logger } from 'pino';
import type { BubbleApiError } from '../client/bubble-api-error.js';
import { fullJitterDelay } from '../client/backoff.js';
import { isCredentialsUnavailable, type Credentials } from '../client/credentials.js';
import { classifyClose } from '../client/retry-classification.js';
import { BearerRenewal } from './bearer-renewal.js';
import { Heartbeat } from './heartbeat.js';
import { refusedCredentialError, unopenableSocketError } from './live-errors.js';
import type { LiveState } from './live-options.js';
import type { AnyLiveSubscription } from './live-subscription.js';
import { SubscriptionMux } from './subscription-mux.js';
import type { WebSocketFactory, WebSocketLike } from './web-socket-like.js';

/** The longest wait between two tries to renew a refused bearer while its issuer is unreachable. */
const RENEW_RETRY_CAP_MS = 60_000;
/** Twice the server's frame limit (1 MiB): a frame that big is the server's bug, not ours to read. */
const MAX_PAYLOAD_BYTES = 2 * 1024 * 1024;

type Timer = ReturnType<typeof setTimeout>;

export type StateDetail = { attempt?: number; delayMs?: number; code?: number; reason?: string };

/** How every socket of one live connection is opened and kept; resolved once by `BubbleLive`. */
export interface LiveSocketSettings {
  readonly wsUrl: string;
  readonly connectTimeoutMs: number;
  readonly reconnectBaseMs: number;
  readonly reconnectCapMs: number;
  readonly heartbeatIntervalMs: number;
  readonly heartbeatTimeoutMs: number;
  readonly random: () => number;
  readonly credentials: Credentials;
  readonly webSocketFactory: WebSocketFactory;
}

/** What a socket tells the live connection it belongs to. */
export interface LiveSocketOwner {
  /** The socket's state changed (never to `failed` or `closed`: those the owner decides). */
  stateChanged(socket: LiveSocket, state: LiveState, detail: StateDetail): void;
  /** The server answered `server.ready`. */
  ready(principal: Principal): void;
  /**
   * A failure no reconnect can fix: the credential was refused (4001, not renewable) or revoked
   * (4003), or no socket can be opened at the URL. Every socket shares the credential and the
   * URL, so the owner fails them all.
   */
  failed(error: BubbleApiError, detail: StateDetail): void;
}

/**
 * One WebSocket of a live connection and the subscriptions it carries (at most
 * `LIMITS.maxSubscriptionsPerSocket`; `BubbleLive` places them). Reconnects on any drop with
 * exponential backoff and full jitter (capped at 30 s), re-creates each subscription where it
 * left off, detects silent dead sockets with a heartbeat, and treats 4003 as terminal. 4001 is
 * terminal too, unless the credentials can be renewed: then the bearer is renewed once and the
 * socket resumes at once (an access token that expired while the socket was open); a second
 * 4001 before the server is ready again is final. A renewal that fails for a passing reason (the
 * identity provider is down: `renew` throws, or has no newer bearer than the refused one) is tried
 * again with backoff (capped at 60 s) while the state says `waiting`, and the socket reconnects
 * once one succeeds; only a definite answer (`renew` gives null) is final. A 4001 saying the
 * server could not reach its identity provider is an ordinary drop: reconnected with backoff.
 * The socket is opened when its first subscription starts and closed when its last one ends.
 *
 * It speaks only `WebSocketLike`, sends only the protocol's `ClientFrame`s and reads only what
 * `ServerFrameSchema` accepts. The subscriptions themselves, how their subscribes are batched, and
 * what happens when a consumer falls behind, are its `SubscriptionMux`'s.
 */
export class LiveSocket {
  readonly mux: SubscriptionMux;
  readonly #settings: LiveSocketSettings;
  readonly #owner: LiveSocketOwner;
  readonly #logger: Logger;
  readonly #heartbeat: Heartbeat;
  readonly #renewal: BearerRenewal;
  #state: LiveState = 'idle';
  #socket: WebSocketLike | undefined;
  #attempt = 0;
  #reconnectTimer: Timer | undefined;
  #readyTimer: Timer | undefined;

  constructor(settings: LiveSocketSettings, owner: LiveSocketOwner, logger: Logger) {
    this.#settings = settings;
    this.#owner = owner;
    this.#logger = logger;
    this.#renewal = new BearerRenewal(
      settings.credentials,
      { baseMs: Math.max(settings.reconnectBaseMs, 1_000), capMs: RENEW_RETRY_CAP_MS },
      settings.random,
    );
    this.#heartbeat = new Heartbeat(
      settings.heartbeatIntervalMs,
      settings.heartbeatTimeoutMs,
      () => this.mux.ping(),
      () => {
        this.#logger.warn('no answer to ping; the connection is dead, reconnecting');
        this.#socket?.terminate();
      },
    );
    this.mux = new SubscriptionMux(
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
      logger,
      { baseMs: settings.reconnectBaseMs, capMs: settings.reconnectCapMs },
      settings.random,
    );
  }

  get state(): LiveState {
    return this.#state;
  }

  /** Subscriptions this socket carries (subscribed, parked or waiting to be). */
  get size(): number {
    return this.mux.size;
  }

  /** Carries `subscription` from now on; opens the socket if it is not. */
  add(subscription: AnyLiveSubscription): void {
    this.mux.add(subscription);
    if (this.#state === 'idle') this.#connect();
  }

  /** Ends every subscription (their iterations finish) and closes the socket for good. */
  close(): void {
    this.mux.endAll({ kind: 'closed' });
    this.#teardown('closed by the client');
    this.#state = 'closed';
  }

  /** Ends every subscription with `error` and closes the socket for good (the owner's `failed`). */
  fail(error: unknown): void {
    this.mux.failAll(error);
    this.#teardown('the live connection failed');
    this.#state = 'failed';
  }

  #connect(): void {
    this.#setState('connecting', { attempt: this.#attempt });
    let socket: WebSocketLike;
    try {
      socket = this.#settings.webSocketFactory(
        this.#settings.wsUrl,
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
        { handshakeTimeoutMs: this.#settings.connectTimeoutMs, maxPayloadBytes: MAX_PAYLOAD_BYTES },
      );
    } catch (error) {
      // Only a malformed URL gets here: nothing a retry would fix.
      this.#owner.failed(unopenableSocketError(this.#settings.wsUrl, error), {});
      return;
    }
    this.#socket = socket;
    this.#readyTimer = setTimeout(() => {
      this.#logger.warn({ timeoutMs: this.#settings.connectTimeoutMs }, 'no server.ready in time; reconnecting');
      socket.terminate();
    }, this.#settings.connectTimeoutMs);
  }

  async #authenticate(socket: WebSocketLike): Promise<void> {
    let token: string;
    try {
      token = await this.#settings.credentials.current();
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
        this.#owner.ready(frame.principal);
        this.#renewal.ready();
        // The backoff is reset only once a subscription is served (`MuxLink.served`), so a server
        // that accepts and then drops every connection still sees the delays grow.
        this.#setState('ready', {});
        this.#heartbeat.start();
        this.mux.subscribeAll();
        return;
      }
      case 'pong':
        // Any frame is a sign of life (counted on arrival); a pong tells the subscribes which ping it answers.
        this.mux.pong();
        return;
      case 'subscribed':
      case 'event':
      case 'grant':
      case 'grants_synced':
      case 'subscription_ended':
      case 'error':
      case 'presence':
        this.mux.route(frame);
        return;
      default:
        // Frames come through ServerFrameSchema, so this is unreachable; a frame that slipped past is logged, not thrown.
        this.#logger.debug({ frame: frame satisfies never }, 'unhandled frame');
    }
  }

  #onClose(code: number, reason: string): void {
    this.#stopTimers();
    this.#socket = undefined;
    this.mux.socketLost();
    const verdict = classifyClose(code, reason);
    if (verdict === 'refused' && this.#renewal.available && this.mux.size > 0) {
      this.#renewAndReconnect(code, reason);
      return;
    }
    if (verdict !== 'reconnect') {
      this.#logger.error({ code, reason }, 'live connection refused the credential; not reconnecting');
      this.#owner.failed(refusedCredentialError(code, reason), { code, reason });
      return;
    }
    if (this.mux.size === 0) {
      this.#setState('idle', { code, reason });
      return;
    }
    const delayMs = fullJitterDelay(
      this.#attempt,
      { baseMs: this.#settings.reconnectBaseMs, capMs: this.#settings.reconnectCapMs },
      this.#settings.random,
    );
    this.#attempt += 1;
    this.#logger.warn({ code, reason, attempt: this.#attempt, delayMs }, 'live connection lost; reconnecting');
    this.#setState('waiting', { attempt: this.#attempt, delayMs, code, reason });
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (this.mux.size > 0 && this.#state === 'waiting') this.#connect();
      else if (this.#state === 'waiting') this.#setState('idle', {});
    }, delayMs);
  }

  /**
   * The server refused the bearer (most often: it expired while the socket was open). Renewed
   * once, the socket opens again at once; every subscription resumes from its last seq. A
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
      if (this.mux.size === 0) {
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
    this.mux.socketLost();
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

  #setState(state: LiveState, detail: StateDetail): void {
    this.#state = state;
    this.#owner.stateChanged(this, state, detail);
  }
}
