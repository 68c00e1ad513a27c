import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/** Limits on the server's TCP connections (protocol.md, "Limits"). */
export interface ConnectionLimits {
  /** Open connections in all (HTTP, keep-alive and WebSocket). Default 4096. */
  maxConnections?: number;
  /** Open connections from one client address. Default 256. */
  maxPerAddress?: number;
  /** A connection must send complete request headers within this. Default 10 s. */
  headersTimeoutMs?: number;
  /** ... and the whole request within this. Default 30 s. */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this. Default 5 s. */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_CONNECTION_LIMITS = Object.freeze({
  maxConnections: 4096,
  maxPerAddress: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
});

const REFUSAL_RETRY_SECONDS = 5;

/**
 * Applies the connection limits to an HTTP server: Node's own header,
 * request and keep-alive timeouts (checked every second rather than every
 * 30 s), and caps on open connections in all and per client address. A
 * connection past a cap is answered at once with 429 and closed, so it costs
 * no file descriptor for long; the connections already open, `/healthz`
 * among them, keep working.
 */
export function guardConnections(server: Server, limits: ConnectionLimits, logger: Logger): void {
  const l = { ...DEFAULT_CONNECTION_LIMITS, ...limits };
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = l.requestTimeoutMs;
  server.keepAliveTimeout = l.keepAliveTimeoutMs;
  const perAddress = new Map<string, number>();
  let open = 0;
  let lastWarning = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const fromAddress = perAddress.get(address) ?? 0;
    if (open >= l.maxConnections || fromAddress >= l.maxPerAddress) {
      const which =
        open >= l.maxConnections
          ? `the server holds ${l.maxConnections} connections`
          : `${address} holds ${l.maxPerAddress} connections`;
      const now = Date.now();
      if (now - lastWarning > 10_000) {
        lastWarning = now;
        logger.warn({ address, open, fromAddress }, `connection refused: ${which}`);
      }
      const body = JSON.stringify({
        error: {
          code: 'rate_limited',
          message: `too many open connections: ${which}; close some and try again`,
          details: {},
        },
      });
      socket.end(
        `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: ${REFUSAL_RETRY_SECONDS}\r\nConnection: close\r\n\r\n${body}`,
      );
      socket.setTimeout(1_000, () => socket.destroy());
      return;
    }
    open += 1;
    perAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
}
