import { CLOSE_CODES, ERROR_CATALOGUE, ServerFrameSchema, type Principal, type ServerFrame } from '@bubble/protocol';
import { pino, type Logger } from 'pino';
import WebSocket from 'ws';
import { BubbleApiError } from '../client/bubble-api-error.js';
import { fullJitterDelay } from '../client/backoff.js';
import {
  isCredentialsUnavailable,
  isProviderUnreachableMessage,
  staticCredentials,
  type Credentials,
} from '../client/credentials.js';
import { Heartbeat } from './heartbeat.js';
import {
  GrantsSubscription,
  ThreadSubscription,
  type AnyLiveSubscription,
  type SubscriptionHost,
} from './live-subscription.js';

export { GrantsSubscription, ThreadSubscription } from './live-subscription.js';

/** The longest wait between two tries to renew a refused bearer while its issuer is unreachable. */
const RENEW_RETRY_CAP_MS = 60_000;
export type { BubbleLiveConfig, BubbleLiveOptions, LiveState } from './live-options.js';
import type { BubbleLiveConfig, LiveState } from './live-options.js';

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
 */
export class BubbleLive implements SubscriptionHost {
  private readonly logger: Logger;
  private readonly wsUrl: string;
  private readonly connectTimeoutMs: number;
  private readonly reconnectBaseMs: number;
  private readonly reconnectCapMs: number;
  private readonly bufferLimit: number;
  private readonly random: () => number;
  private readonly credentials: Credentials;

  private state: LiveState = 'idle';
  private readonly subscriptions = new Set<AnyLiveSubscription>();
  /** Wire id to subscription, for the current socket only. */
  private readonly wire = new Map<string, AnyLiveSubscription>();
  private readonly wireIdOf = new Map<AnyLiveSubscription, string>();
  private socket: WebSocket | undefined;
  private attempt = 0;
  private nextLocalId = 0;
  private nextWireId = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readyTimer: NodeJS.Timeout | undefined;
  private readonly heartbeat: Heartbeat;
  private paused = false;
  private terminalError: BubbleApiError | undefined;
  /** The bearer sent in the last `client.auth`, and whether it was renewed since the last `server.ready`. */
  private sentToken: string | undefined;
  private renewedSinceReady = false;
  /** Renewals in a row that failed for a passing reason (the backoff of `renewAndReconnect`). */
  private renewFailures = 0;
  /** Subscribes refused for a passing reason, by how often in a row. */
  private readonly refusals = new Map<AnyLiveSubscription, number>();
  private readonly resubscribeTimers = new Set<NodeJS.Timeout>();
  /** The principal the server confirmed on the last `server.ready`. */
  principal: Principal | undefined;

  constructor(private readonly config: BubbleLiveConfig) {
    this.logger = (config.logger ?? pino({ level: 'silent' })).child({ component: 'bubble-live' });
    this.wsUrl = config.wsUrl ?? deriveWsUrl(config.url);
    this.connectTimeoutMs = config.connectTimeoutMs ?? 10_000;
    this.reconnectBaseMs = config.reconnectBaseMs ?? 500;
    this.reconnectCapMs = Math.min(config.reconnectCapMs ?? 30_000, 30_000);
    this.bufferLimit = Math.max(2, config.bufferLimit ?? 1_000);
    this.random = config.random ?? Math.random;
    const token = config.token;
    if (config.credentials === undefined && token === undefined)
      throw new Error('the live connection needs a token or credentials');
    this.credentials = config.credentials ?? staticCredentials(token as string);
    this.heartbeat = new Heartbeat(
      config.heartbeatIntervalMs ?? 15_000,
      config.heartbeatTimeoutMs ?? 10_000,
      () => this.send({ type: 'ping' }),
      () => {
        this.logger.warn('no answer to ping; the connection is dead, reconnecting');
        this.socket?.terminate();
      },
    );
  }

  get connectionState(): LiveState {
    return this.state;
  }

  subscribeThread(threadId: string, options: { afterSeq?: number; signal?: AbortSignal } = {}): ThreadSubscription {
    const subscription = new ThreadSubscription(
      this.localId('t'),
      threadId,
      options.afterSeq ?? 0,
      this,
      this.logger.child({ threadId }),
      this.bufferLimit,
      options.signal,
    );
    this.add(subscription);
    return subscription;
  }

  subscribeGrantsAsIterable(options: { signal?: AbortSignal } = {}): GrantsSubscription {
    const subscription = new GrantsSubscription(
      this.localId('g'),
      this,
      this.logger.child({ stream: 'grants' }),
      this.bufferLimit,
      options.signal,
    );
    this.add(subscription);
    return subscription;
  }

  /** Ends every subscription (their iterations finish) and closes the socket for good. */
  close(): void {
    if (this.state === 'closed') return;
    for (const subscription of this.subscriptions) subscription.end({ kind: 'closed' });
    this.subscriptions.clear();
    this.teardown('closed by the client');
    this.setState('closed', {});
  }

  // SubscriptionHost.

  release(subscription: AnyLiveSubscription): void {
    if (!this.subscriptions.delete(subscription)) return;
    this.refusals.delete(subscription);
    const wireId = this.wireIdOf.get(subscription);
    this.forgetWire(subscription);
    if (wireId !== undefined && this.state === 'ready') this.send({ type: 'unsubscribe', id: wireId });
    if (this.subscriptions.size === 0) this.goIdle();
    else this.drained();
  }

  drained(): void {
    if (!this.paused || this.socket === undefined) return;
    for (const subscription of this.subscriptions) if (!subscription.isBelowLowWater) return;
    this.paused = false;
    this.logger.debug('consumers caught up; reading resumes');
    this.socket.resume();
    this.startHeartbeat();
  }

  // Connection lifecycle.

  private add(subscription: AnyLiveSubscription): void {
    if (this.state === 'closed') {
      subscription.fail(new Error('the live connection is closed'));
      return;
    }
    if (this.terminalError !== undefined) {
      subscription.fail(this.terminalError);
      return;
    }
    this.subscriptions.add(subscription);
    if (this.state === 'ready') this.subscribeOnWire(subscription);
    else if (this.state === 'idle') this.connect();
  }

  private connect(): void {
    this.setState('connecting', { attempt: this.attempt });
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.wsUrl, { handshakeTimeout: this.connectTimeoutMs, maxPayload: 2 * 1024 * 1024 });
    } catch (error) {
      // Only a malformed URL gets here: nothing a retry would fix.
      this.terminalError = new BubbleApiError({
        code: 'network',
        status: 0,
        retryable: false,
        message: `cannot open ${this.wsUrl}: ${String(error)}`,
        cause: error,
      });
      for (const subscription of this.subscriptions) subscription.fail(this.terminalError);
      this.subscriptions.clear();
      this.setState('failed', {});
      return;
    }
    this.socket = socket;
    this.readyTimer = setTimeout(() => {
      this.logger.warn({ timeoutMs: this.connectTimeoutMs }, 'no server.ready in time; reconnecting');
      socket.terminate();
    }, this.connectTimeoutMs);
    socket.on('open', () => {
      void this.authenticate(socket);
    });
    socket.on('message', (data, isBinary) => {
      if (socket !== this.socket) return;
      this.heartbeat.seen();
      if (isBinary) {
        this.logger.warn('binary frame ignored');
        return;
      }
      this.onFrame(data.toString());
    });
    socket.on('error', (error) => {
      this.logger.debug({ err: error }, 'socket error');
    });
    socket.on('close', (code, reasonBuffer) => {
      if (socket !== this.socket) return;
      this.onClose(code, reasonBuffer.toString());
    });
  }

  private async authenticate(socket: WebSocket): Promise<void> {
    let token: string;
    try {
      token = await this.credentials.current();
    } catch (error) {
      if (socket !== this.socket) return;
      this.socket = undefined;
      socket.terminate();
      if (isCredentialsUnavailable(error)) {
        // No bearer for now (the identity provider is unreachable): an ordinary drop, retried.
        this.logger.warn({ err: error }, 'no bearer for the live connection for now; trying again');
        this.onClose(1013, `no bearer for now: ${error.message}`);
        return;
      }
      // The credentials have no bearer to give (signed out): as final as a refused one.
      this.logger.warn({ err: error }, 'no bearer for the live connection');
      this.renewedSinceReady = true;
      this.onClose(
        CLOSE_CODES.notAuthenticated,
        `no bearer: ${error instanceof Error ? error.message : String(error)}`,
      );
      return;
    }
    if (socket !== this.socket || socket.readyState !== WebSocket.OPEN) return;
    this.sentToken = token;
    socket.send(JSON.stringify({ type: 'client.auth', token }));
  }

  private onFrame(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.logger.warn('frame that is not JSON ignored');
      return;
    }
    const parsed = ServerFrameSchema.safeParse(json);
    if (!parsed.success) {
      this.logger.debug({ type: (json as { type?: unknown })?.type }, 'unknown or malformed frame ignored');
      return;
    }
    this.handle(parsed.data);
  }

  private handle(frame: ServerFrame): void {
    switch (frame.type) {
      case 'server.ready': {
        clearTimeout(this.readyTimer);
        this.principal = frame.principal;
        this.renewedSinceReady = false;
        this.renewFailures = 0;
        // The backoff is reset only once a subscription is served (below), so a server that
        // accepts and then drops every connection still sees the delays grow.
        this.setState('ready', {});
        this.startHeartbeat();
        for (const subscription of this.subscriptions) this.subscribeOnWire(subscription);
        return;
      }
      case 'subscribed': {
        const subscription = this.wire.get(frame.id);
        if (subscription !== undefined) this.served(subscription);
        if (subscription instanceof ThreadSubscription) subscription.onSubscribed(frame.headSeq);
        return;
      }
      case 'event': {
        const subscription = this.wire.get(frame.id);
        if (!(subscription instanceof ThreadSubscription)) return;
        if (subscription.accept(frame.event) === 'gap') {
          this.send({ type: 'unsubscribe', id: frame.id });
          this.forgetWire(subscription);
          this.subscribeOnWire(subscription);
        }
        this.checkBackpressure(subscription);
        return;
      }
      case 'grant': {
        const subscription = this.wire.get(frame.id);
        if (!(subscription instanceof GrantsSubscription)) return;
        subscription.accept(frame.change, frame.grant);
        this.checkBackpressure(subscription);
        return;
      }
      case 'grants_synced': {
        const subscription = this.wire.get(frame.id);
        if (subscription !== undefined) this.served(subscription);
        if (subscription instanceof GrantsSubscription) subscription.acceptSynced();
        if (subscription !== undefined) this.checkBackpressure(subscription);
        return;
      }
      case 'subscription_ended': {
        const subscription = this.wire.get(frame.id);
        if (subscription === undefined) return;
        this.logger.info({ reason: frame.reason }, 'subscription ended by the server');
        this.forgetWire(subscription);
        this.subscriptions.delete(subscription);
        subscription.end({ kind: 'server', reason: frame.reason });
        if (this.subscriptions.size === 0) this.goIdle();
        return;
      }
      case 'error': {
        const subscription = frame.id === undefined ? undefined : this.wire.get(frame.id);
        const error = new BubbleApiError({
          code: frame.error.code,
          status: ERROR_CATALOGUE[frame.error.code].status,
          retryable: false,
          message: frame.error.message,
          details: { ...frame.error.details, source: 'websocket' },
        });
        if (subscription === undefined) {
          this.logger.warn({ code: frame.error.code, message: frame.error.message }, 'error frame from the server');
          return;
        }
        this.forgetWire(subscription);
        if (ERROR_CATALOGUE[frame.error.code].retryable) {
          this.resubscribeLater(subscription, frame.error.code);
          return;
        }
        this.subscriptions.delete(subscription);
        subscription.fail(error);
        if (this.subscriptions.size === 0) this.goIdle();
        return;
      }
      case 'pong':
        return;
      default: {
        const unreachable: never = frame;
        this.logger.debug({ frame: unreachable }, 'unhandled frame');
      }
    }
  }

  private onClose(code: number, reason: string): void {
    this.stopTimers();
    this.socket = undefined;
    this.paused = false;
    this.wire.clear();
    this.wireIdOf.clear();
    // The server could not check the bearer (its identity provider is down), it did not refuse it.
    const uncheckable = code === CLOSE_CODES.notAuthenticated && isProviderUnreachableMessage(reason);
    if (code === CLOSE_CODES.notAuthenticated && !uncheckable && this.mayRenew()) {
      this.renewAndReconnect(code, reason);
      return;
    }
    if ((code === CLOSE_CODES.notAuthenticated && !uncheckable) || code === CLOSE_CODES.credentialRevoked) {
      const revoked = code === CLOSE_CODES.credentialRevoked;
      this.terminalError = new BubbleApiError({
        code: 'unauthorized',
        status: 401,
        retryable: false,
        message: revoked
          ? 'the credential was revoked (WebSocket close 4003)'
          : `the server did not accept the credential (WebSocket close 4001${reason ? `: ${reason}` : ''})`,
        details: { closeCode: code, reason: revoked ? 'credential_revoked' : 'not_authenticated' },
      });
      this.logger.error({ code, reason }, 'live connection refused the credential; not reconnecting');
      for (const subscription of this.subscriptions) subscription.fail(this.terminalError);
      this.subscriptions.clear();
      this.setState('failed', { code, reason });
      return;
    }
    if (this.subscriptions.size === 0) {
      this.setState('idle', { code, reason });
      return;
    }
    const delayMs = fullJitterDelay(
      this.attempt,
      { baseMs: this.reconnectBaseMs, capMs: this.reconnectCapMs },
      this.random,
    );
    this.attempt += 1;
    this.logger.warn({ code, reason, attempt: this.attempt, delayMs }, 'live connection lost; reconnecting');
    this.setState('waiting', { attempt: this.attempt, delayMs, code, reason });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.subscriptions.size > 0 && this.state === 'waiting') this.connect();
      else if (this.state === 'waiting') this.setState('idle', {});
    }, delayMs);
  }

  private mayRenew(): boolean {
    return (
      this.credentials.renew !== undefined &&
      this.sentToken !== undefined &&
      !this.renewedSinceReady &&
      this.subscriptions.size > 0
    );
  }

  /**
   * The server refused the bearer (most often: it expired while the socket was open). Renewed
   * once, the connection opens again at once; every subscription resumes from its last seq. A
   * renewal that fails for a passing reason is tried again after a backoff (60 s at most).
   */
  private renewAndReconnect(code: number, reason: string): void {
    this.renewedSinceReady = true;
    const rejected = this.sentToken as string;
    this.logger.info({ code, reason }, 'the server refused the bearer; renewing it');
    this.setState('waiting', { attempt: this.attempt, delayMs: 0, code, reason });
    const retryLater = (why: unknown) => {
      if (this.state !== 'waiting' || this.socket !== undefined) return;
      if (this.subscriptions.size === 0) {
        this.setState('idle', {});
        return;
      }
      const delayMs = fullJitterDelay(
        this.renewFailures,
        { baseMs: Math.max(this.reconnectBaseMs, 1_000), capMs: RENEW_RETRY_CAP_MS },
        this.random,
      );
      this.renewFailures += 1;
      this.logger.warn(
        { err: why, attempt: this.renewFailures, delayMs },
        'renewing the bearer failed for now; trying again',
      );
      this.setState('waiting', { attempt: this.renewFailures, delayMs, code, reason });
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        if (this.state === 'waiting' && this.socket === undefined) this.renewAndReconnect(code, reason);
      }, delayMs);
    };
    this.credentials.renew!(rejected).then(
      (next) => {
        if (this.state !== 'waiting' || this.socket !== undefined) return;
        if (next === null) {
          // A definite answer: there is no bearer any more (the person has to sign in again).
          this.renewedSinceReady = true;
          this.onClose(code, reason);
          return;
        }
        // Nothing newer than the refused bearer yet: the renewal did not happen (provider down).
        if (next === rejected) {
          retryLater(new Error('no newer bearer than the refused one'));
          return;
        }
        if (this.subscriptions.size > 0) this.connect();
        else this.setState('idle', {});
      },
      (error: unknown) => retryLater(error),
    );
  }

  /** The server confirmed a subscription: the connection works, so the backoff starts over. */
  private served(subscription: AnyLiveSubscription): void {
    this.refusals.delete(subscription);
    this.attempt = 0;
  }

  /**
   * A subscribe the server refused for a passing reason (`internal`, `rate_limited`) is tried
   * again on the same socket after a backoff of its own; a reconnect in between re-subscribes it
   * anyway.
   */
  private resubscribeLater(subscription: AnyLiveSubscription, code: string): void {
    const attempt = this.refusals.get(subscription) ?? 0;
    this.refusals.set(subscription, attempt + 1);
    const delayMs = fullJitterDelay(attempt, { baseMs: this.reconnectBaseMs, capMs: this.reconnectCapMs }, this.random);
    this.logger.warn(
      { subscription: subscription.localId, code, attempt: attempt + 1, delayMs },
      'subscribe refused for now; trying again',
    );
    const timer = setTimeout(() => {
      this.resubscribeTimers.delete(timer);
      if (this.state === 'ready' && this.subscriptions.has(subscription) && !this.wireIdOf.has(subscription))
        this.subscribeOnWire(subscription);
    }, delayMs);
    this.resubscribeTimers.add(timer);
  }

  private subscribeOnWire(subscription: AnyLiveSubscription): void {
    if (subscription.isOver) return;
    const wireId = `s${(this.nextWireId += 1)}`;
    this.wire.set(wireId, subscription);
    this.wireIdOf.set(subscription, wireId);
    this.send(subscription.subscribeFrame(wireId));
  }

  private forgetWire(subscription: AnyLiveSubscription): void {
    const wireId = this.wireIdOf.get(subscription);
    if (wireId !== undefined) this.wire.delete(wireId);
    this.wireIdOf.delete(subscription);
  }

  private checkBackpressure(subscription: AnyLiveSubscription): void {
    if (this.paused || this.socket === undefined || !subscription.isFull) return;
    // Stop reading: TCP pushes back on the server, which closes us with 4008 if it cannot
    // wait; we then resume from the last delivered seq, losing nothing.
    this.paused = true;
    this.stopHeartbeat();
    this.logger.warn({ subscription: subscription.localId }, 'a consumer is behind; reading paused');
    this.socket.pause();
  }

  private startHeartbeat(): void {
    this.heartbeat.start();
  }

  private stopHeartbeat(): void {
    this.heartbeat.stop();
  }

  private stopTimers(): void {
    this.stopHeartbeat();
    for (const timer of this.resubscribeTimers) clearTimeout(timer);
    this.resubscribeTimers.clear();
    clearTimeout(this.readyTimer);
    clearTimeout(this.reconnectTimer);
    this.readyTimer = undefined;
    this.reconnectTimer = undefined;
  }

  private goIdle(): void {
    this.teardown('no subscriptions left');
    this.setState('idle', {});
  }

  private teardown(reason: string): void {
    this.stopTimers();
    const socket = this.socket;
    this.socket = undefined;
    this.paused = false;
    this.wire.clear();
    this.wireIdOf.clear();
    if (socket !== undefined) {
      if (socket.readyState === WebSocket.OPEN) socket.close(1000, reason);
      else socket.terminate();
    }
  }

  private send(frame: Record<string, unknown>): void {
    const socket = this.socket;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify(frame));
  }

  private setState(
    state: LiveState,
    detail: { attempt?: number; delayMs?: number; code?: number; reason?: string },
  ): void {
    this.state = state;
    this.config.onStateChange?.(state, detail);
  }

  private localId(prefix: string): string {
    return `${prefix}${(this.nextLocalId += 1)}`;
  }
}

/** `http://host:port/base` to `ws://host:port/base/v1/ws`. */
export function deriveWsUrl(url: string): string {
  const parsed = new URL(url);
  parsed.protocol = parsed.protocol === 'https:' ? 'wss:' : 'ws:';
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/v1/ws`;
  return parsed.toString();
}
