/**
 * The few things the live connection needs of one WebSocket, so that `BubbleLive` builds no
 * socket of its own: it is handed a `WebSocketFactory` (Node's `ws` in `ws-node.ts`, the
 * browser's native WebSocket in `ws-browser.ts`, a fake in a test) and speaks only this.
 *
 * Text frames in and out, a close, a terminate, and optional flow control. The factory takes the
 * listener up front, so no event can fire before anyone listens.
 */
export interface WebSocketLike {
  /** True once open and until a close starts: only then may `send` be called. */
  readonly isOpen: boolean;
  /** Sends one text frame. */
  send(text: string): void;
  /** Starts the closing handshake. `code` is 1000 or in 3000-4999 (what browsers let scripts send). */
  close(code: number, reason: string): void;
  /**
   * Drops the link without a closing handshake (a dead link never finishes one). The listener's
   * `onClose` still fires, with 1006, at once or soon after; it may fire synchronously.
   */
  terminate(): void;
  /**
   * Where the transport can stop reading (Node's `ws`: the TCP socket stops being read, so the
   * server feels the pushback and, past its bound, closes with 4008). Absent where it cannot (the
   * browser's WebSocket delivers every frame it receives): the live connection then handles a
   * consumer that falls behind by itself (see `subscription-mux.ts`).
   */
  readonly flowControl?: WebSocketFlowControl;
}

export interface WebSocketFlowControl {
  /** Stops delivering frames (a few already read may still arrive). */
  pause(): void;
  resume(): void;
}

/** What a socket reports. Each callback may fire only after the factory returned. */
export interface WebSocketListener {
  onOpen(): void;
  /** One frame: the text of a text frame, or `binary` (no part of the protocol, yet a sign of life). */
  onMessage(frame: { readonly kind: 'text'; readonly text: string } | { readonly kind: 'binary' }): void;
  /** The socket is closed; fires once, whatever closed it. */
  onClose(code: number, reason: string): void;
  /** A transport error; `onClose` follows. */
  onError(error: unknown): void;
}

export interface WebSocketOpenOptions {
  /** Time allowed for the opening handshake, where the transport lets it be set. */
  readonly handshakeTimeoutMs: number;
  /** Largest frame accepted, where the transport lets it be set. */
  readonly maxPayloadBytes: number;
}

/** Opens one socket to `url`. Throws only for what no retry can fix (a malformed URL). */
export type WebSocketFactory = (
  url: string,
  listener: WebSocketListener,
  options: WebSocketOpenOptions,
) => WebSocketLike;
