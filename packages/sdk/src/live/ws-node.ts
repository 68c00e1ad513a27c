import WebSocket from 'ws';
import type { WebSocketFactory } from './web-socket-like.js';

/**
 * `WebSocketLike` over the `ws` package: the live connection's default in Node. It has real
 * flow control: `pause()` stops reading the TCP socket, so the kernel's window fills and the
 * server sees a slow consumer (and closes it with 4008 past its bound, which the live connection
 * answers by resuming from its last seq). `ws` also enforces the handshake timeout and the frame
 * size limit itself.
 */
export const nodeWebSocket: WebSocketFactory = (url, listener, options) => {
  const socket = new WebSocket(url, {
    handshakeTimeout: options.handshakeTimeoutMs,
    maxPayload: options.maxPayloadBytes,
  });
  socket.on('open', () => listener.onOpen());
  socket.on('message', (data, isBinary) =>
    listener.onMessage(isBinary ? { kind: 'binary' } : { kind: 'text', text: data.toString() }),
  );
  socket.on('error', (error) => listener.onError(error));
  socket.on('close', (code, reason) => listener.onClose(code, reason.toString()));
  return {
    get isOpen() {
      return socket.readyState === WebSocket.OPEN;
    },
    send: (text) => socket.send(text),
    close: (code, reason) => socket.close(code, reason),
    terminate: () => socket.terminate(),
    flowControl: {
      pause: () => socket.pause(),
      resume: () => socket.resume(),
    },
  };
};
