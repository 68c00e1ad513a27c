import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';

/** The loopback end of a test relay: clients connect to `wsUrl`; `close` stops listening (the relay ends its own sockets). */
export interface WsRelayListener {
  readonly wsUrl: string;
  close(): Promise<void>;
}

/** Listens on a free loopback port for WebSocket clients (plain HTTP gets 404), handing each to `onClient`. */
export async function listenForRelay(onClient: (client: WebSocket) => void): Promise<WsRelayListener> {
  const http = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  wss.on('connection', onClient);
  return {
    wsUrl: `ws://127.0.0.1:${(http.address() as AddressInfo).port}/v1/ws`,
    async close() {
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
