import type { Logger } from 'pino';
import type { Credentials } from '../client/credentials.js';
import type { WebSocketFactory } from './web-socket-like.js';

export interface BubbleLiveOptions {
  /** The WebSocket URL; derived from the client's URL (`/v1/ws`) by default. */
  readonly wsUrl?: string;
  /**
   * Opens the socket: `nodeWebSocket` (the `ws` package) by default; a browser passes
   * `browserWebSocket` (from `@bubble/sdk/client`), a test may pass a fake.
   */
  readonly webSocketFactory?: WebSocketFactory;
  /** How often to send a `ping` frame, in ms. Default 15 000. */
  readonly heartbeatIntervalMs?: number;
  /** How long to wait for any frame after a ping before declaring the socket dead, in ms. Default 10 000. */
  readonly heartbeatTimeoutMs?: number;
  /** Time allowed to open a socket and get `server.ready`, in ms. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** Reconnect backoff: full jitter between 0 and min(capMs, baseMs * 2^attempt). Defaults 500 and 30 000. */
  readonly reconnectBaseMs?: number;
  readonly reconnectCapMs?: number;
  /**
   * Most items a subscription buffers for a slow consumer before it is held back (reading pauses
   * where the socket can pause; elsewhere that subscription catches up by replay). Default 1 000.
   */
  readonly bufferLimit?: number;
  /** Called on every change of the connection's state (for status lines, not for logic). */
  readonly onStateChange?: (
    state: LiveState,
    detail: { attempt?: number; delayMs?: number; code?: number; reason?: string },
  ) => void;
  readonly random?: () => number;
}

export interface BubbleLiveConfig extends BubbleLiveOptions {
  /** The server's base URL (`http://…`). */
  readonly url: string;
  /** A bearer that never changes; or `credentials`, which wins when both are given. */
  readonly token?: string;
  /**
   * A bearer that is renewed (an identity provider's access token): asked for before each
   * `client.auth`; on close 4001 it is renewed once and the connection resumes where it left off.
   */
  readonly credentials?: Credentials;
  readonly logger?: Logger;
}

export type LiveState = 'idle' | 'connecting' | 'ready' | 'waiting' | 'failed' | 'closed';
