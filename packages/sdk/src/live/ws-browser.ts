import type { WebSocketFactory, WebSocketLike } from './web-socket-like.js';

/**
 * The part of the WHATWG WebSocket this adapter uses, typed here because the sdk is compiled
 * without the DOM library. The browser's `WebSocket` has it; so does `ws`'s class (which the
 * adapter's unit tests use in Node).
 */
export interface StandardWebSocket {
  readonly readyState: number;
  binaryType: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { readonly data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { readonly code: number; readonly reason: string }) => void): void;
}

export type StandardWebSocketConstructor = new (url: string) => StandardWebSocket;

/** `WebSocket.OPEN` in the standard. */
const OPEN = 1;

/**
 * `WebSocketLike` over the browser's native WebSocket (the global `WebSocket`): what the web app
 * passes as `live.webSocketFactory`. It imports nothing from Node.
 *
 * What the browser cannot do, and what stands in for it:
 * - No flow control: a browser WebSocket delivers every frame it receives, as fast as the page's
 *   event loop runs, and has no `pause`. So `flowControl` is absent and the live connection
 *   bounds a slow consumer's buffer itself: a subscription that falls `bufferLimit` items behind
 *   is unsubscribed, keeps what it buffered, and re-subscribes after its last buffered seq once
 *   its consumer has read half of it (the protocol's replay sends the rest; see
 *   `subscription-mux.ts`). The socket is read all along, so the heartbeat keeps running.
 * - No handshake timeout or frame size option: the live connection's own `server.ready`
 *   deadline covers the first, and the server limits frames to 1 MiB.
 * - Scripts may close only with 1000 or 3000-4999: any other code is sent as 1000.
 * - No `terminate`: the socket is closed, its later events are ignored, and the close (1006) is
 *   reported at once, as `ws` does for a dead link, instead of after a closing handshake that a
 *   dead link never finishes.
 */
export function browserWebSocketFrom(WebSocketClass: StandardWebSocketConstructor): WebSocketFactory {
  return (url, listener) => {
    const socket = new WebSocketClass(url);
    // ArrayBuffer rather than Blob: nothing to read asynchronously for a frame that is ignored.
    socket.binaryType = 'arraybuffer';
    let closed = false;
    const closeOnce = (code: number, reason: string) => {
      if (closed) return;
      closed = true;
      listener.onClose(code, reason);
    };
    socket.addEventListener('open', () => {
      if (!closed) listener.onOpen();
    });
    socket.addEventListener('message', (event) => {
      if (closed) return;
      listener.onMessage(typeof event.data === 'string' ? { kind: 'text', text: event.data } : { kind: 'binary' });
    });
    // The browser says nothing about the cause (by design: no network details for scripts).
    socket.addEventListener('error', () => {
      if (!closed) listener.onError(new Error('WebSocket error'));
    });
    socket.addEventListener('close', (event) => closeOnce(event.code, event.reason));
    const adapter: WebSocketLike = {
      get isOpen() {
        return !closed && socket.readyState === OPEN;
      },
      send: (text) => socket.send(text),
      close: (code, reason) => {
        const allowed = code === 1000 || (code >= 3000 && code <= 4999);
        socket.close(allowed ? code : 1000, truncateUtf8(reason, 123));
      },
      terminate: () => {
        try {
          socket.close();
        } catch {
          // Already closing or closed: nothing more to do.
        }
        closeOnce(1006, '');
      },
    };
    return adapter;
  };
}

/** The browser's own WebSocket, looked up when a socket is opened (so importing this module is safe anywhere). */
export const browserWebSocket: WebSocketFactory = (url, listener, options) => {
  const WebSocketClass = (globalThis as { WebSocket?: StandardWebSocketConstructor }).WebSocket;
  if (WebSocketClass === undefined) throw new Error('this environment has no global WebSocket');
  return browserWebSocketFrom(WebSocketClass)(url, listener, options);
};

/** A close reason is at most 123 bytes of UTF-8, or the browser throws. */
function truncateUtf8(text: string, maxBytes: number): string {
  const encoder = new TextEncoder();
  if (encoder.encode(text).length <= maxBytes) return text;
  let end = text.length;
  while (end > 0 && encoder.encode(text.slice(0, end)).length > maxBytes) end -= 1;
  return text.slice(0, end);
}
