import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { canonicalIp, NO_TRUSTED_PROXIES, type TrustedProxies } from '../domain/client-address.js';

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

/** A request or upgrade past a connection cap: what to answer (429). */
export interface ConnectionRefusal {
  message: string;
  retryAfterSeconds: number;
}

export interface ConnectionGuard {
  /**
   * Counts the connection that carries `req` against the request's client
   * address, when the connection comes from a trusted proxy (the proxy's
   * connections are counted per client only once their headers say whose
   * they are, and a plain request's only until its answer is done, since the
   * proxy keeps the connection for its next client). A refusal when that
   * address already holds its cap: the caller answers 429 and closes the
   * connection. Null otherwise, and always for a connection from anyone else
   * (counted when it was accepted). `res`: the answer of a plain request;
   * absent for an upgrade, counted until the socket closes.
   */
  admit(req: IncomingMessage, res?: ServerResponse): ConnectionRefusal | null;
}

/**
 * Applies the connection limits to an HTTP server: Node's own header,
 * request and keep-alive timeouts (checked every second rather than every
 * 30 s), and caps on open connections in all and per client address
 * (protocol.md, "Limits"). A connection past a cap is answered at once with
 * 429 and closed, so it costs no file descriptor for long; the connections
 * already open, `/healthz` among them, keep working.
 *
 * The cap in all counts every connection when it is accepted. The cap per
 * address counts a connection from an untrusted peer against that peer when
 * it is accepted, and one from a trusted proxy against the client address
 * its request or upgrade names (`admit`), while that request is answered or
 * that upgraded socket is open.
 */
export function guardConnections(
  server: Server,
  limits: ConnectionLimits,
  logger: Logger,
  trusted: TrustedProxies = NO_TRUSTED_PROXIES,
  addressOf: (req: IncomingMessage) => string | undefined = (req) => req.socket.remoteAddress,
): ConnectionGuard {
  const l = { ...DEFAULT_CONNECTION_LIMITS, ...limits };
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = l.requestTimeoutMs;
  server.keepAliveTimeout = l.keepAliveTimeoutMs;
  const perAddress = new Map<string, number>();
  /** The address each counted connection is counted against. */
  const countedAs = new WeakMap<Socket, string>();
  /** The request a proxied connection is counted for. */
  const countedFor = new WeakMap<Socket, IncomingMessage>();
  /** Connections from trusted proxies, counted per address by `admit`. */
  const proxied = new WeakSet<Socket>();
  let open = 0;
  let lastWarning = 0;
  const warn = (fields: Record<string, unknown>, which: string): void => {
    const now = Date.now();
    if (now - lastWarning > 10_000) {
      lastWarning = now;
      logger.warn(fields, `connection refused: ${which}`);
    }
  };
  const count = (socket: Socket, address: string): void => {
    countedAs.set(socket, address);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
  };
  const release = (socket: Socket): void => {
    const address = countedAs.get(socket);
    if (address === undefined) return;
    countedAs.delete(socket);
    countedFor.delete(socket);
    const left = (perAddress.get(address) ?? 1) - 1;
    if (left <= 0) perAddress.delete(address);
    else perAddress.set(address, left);
  };
  server.on('connection', (socket: Socket) => {
    const peer = canonicalIp(socket.remoteAddress ?? '')?.address ?? socket.remoteAddress ?? 'unknown';
    const viaProxy = trusted.has(peer);
    const fromAddress = viaProxy ? 0 : (perAddress.get(peer) ?? 0);
    if (open >= l.maxConnections || fromAddress >= l.maxPerAddress) {
      const which =
        open >= l.maxConnections
          ? `the server holds ${l.maxConnections} connections`
          : `${peer} holds ${l.maxPerAddress} connections`;
      warn({ address: peer, open, fromAddress }, which);
      refuseOnSocket(socket, {
        message: `too many open connections: ${which}; close some and try again`,
        retryAfterSeconds: REFUSAL_RETRY_SECONDS,
      });
      return;
    }
    open += 1;
    if (viaProxy) proxied.add(socket);
    else count(socket, peer);
    socket.once('close', () => {
      open -= 1;
      release(socket);
    });
  });
  return {
    admit(req, res) {
      const socket = req.socket;
      if (!proxied.has(socket) || socket.destroyed) return null;
      const address = addressOf(req) ?? 'unknown';
      // One request at a time on a connection; its answer done, the connection is the proxy's again.
      if (res !== undefined)
        res.once('close', () => {
          if (countedFor.get(socket) === req) release(socket);
        });
      if (countedAs.get(socket) === address) {
        countedFor.set(socket, req);
        return null;
      }
      release(socket);
      const fromAddress = perAddress.get(address) ?? 0;
      if (fromAddress >= l.maxPerAddress) {
        const which = `${address} holds ${l.maxPerAddress} connections`;
        warn({ address, proxy: socket.remoteAddress, open, fromAddress }, which);
        return {
          message: `too many open connections: ${which}; close some and try again`,
          retryAfterSeconds: REFUSAL_RETRY_SECONDS,
        };
      }
      count(socket, address);
      countedFor.set(socket, req);
      return null;
    },
  };
}

/** Answers a refused connection (429, `rate_limited`) straight on its socket, and closes it. */
export function refuseOnSocket(socket: Duplex, refusal: ConnectionRefusal): void {
  const body = JSON.stringify({ error: { code: 'rate_limited', message: refusal.message, details: {} } });
  socket.on('error', () => {});
  socket.end(
    `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: ${refusal.retryAfterSeconds}\r\nConnection: close\r\n\r\n${body}`,
  );
  // A client that never reads its answer is not waited for.
  setTimeout(() => socket.destroy(), 1_000).unref();
}
