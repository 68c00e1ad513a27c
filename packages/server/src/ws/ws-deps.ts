import type { EventEnvelope, Grant, Principal } from '@bubble/protocol';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ReadAccess } from '../domain/access-rules.js';
import type { AuthAttempt } from '../services/auth-attempts.js';
import type { LiveBus } from '../live/live-bus.js';
import type { PresenceRegistry } from '../presence/presence-registry.js';

/**
 * Everything the WebSocket layer needs from the server's core. The layer
 * never touches the store directly: it reads through these functions and
 * learns about changes only from the live bus.
 */
export interface WsDeps {
  /**
   * `null` when the token is unknown, revoked or expired (4001); `tooManyFailures`
   * when the client's address is over its failed-authentication limit.
   */
  authenticate(token: string, clientAddress: string | undefined): Promise<AuthAttempt>;
  /** The client address of an upgrade (the TCP peer, or whom a trusted proxy names). Absent: the TCP peer. */
  clientAddress?: ((request: IncomingMessage) => string | undefined) | undefined;
  /**
   * Counts an upgrade against its client address's connection cap (`http/connection-guard.ts`):
   * false when past it, the socket then answered 429 and closed. Absent: every upgrade goes on.
   */
  admitUpgrade?: ((request: IncomingMessage, socket: Duplex) => boolean) | undefined;
  /**
   * Takes `count` frames (default 1; a `subscribe_batch` costs more, see
   * `subscribe-batch.ts`) from the budget of `principal` (a bot's is its
   * human's), shared by all its sockets, all or none: 0 when the frame may be
   * handled, else the whole seconds until it may. Absent: frames are not limited.
   */
  takeFrame?: ((principal: Principal, count?: number) => number) | undefined;
  /**
   * `read` with a live grant on the thread or (recursively) read access to its parent; else
   * `forbidden`, or `not_found` when there is no such thread (as HTTP answers 403 and 404).
   */
  readAccess(principalId: string, threadId: string): Promise<ReadAccess>;
  /** Events with `seq > afterSeq`, ascending, at most `limit`; and the thread's head seq. */
  readEvents(threadId: string, afterSeq: number, limit: number): Promise<{ events: EventEnvelope[]; headSeq: number }>;
  listLiveGrants(principalId: string): Promise<Grant[]>;
  /**
   * Who is online: the layer tells it each principal's first authenticated socket and last one,
   * and sends `presence` frames for its changes. Absent: a registry of this layer's sockets alone.
   */
  presence?: PresenceRegistry | undefined;
  bus: LiveBus;
  logger: Logger;
}

export interface WsOptions {
  /** How long a new socket has to send `client.auth`. Default 10 s. */
  authTimeoutMs?: number;
  /**
   * Bytes a socket may have waiting (kernel-side backlog as seen by Node plus
   * frames queued in this layer) before it is closed as a slow consumer (4008).
   * Default 4 MiB.
   */
  maxBufferedBytes?: number;
  /**
   * The longest a flush may wait after the previous one, in ms (default 20).
   * The wait is as long as the previous flush took, so a lone event goes out
   * at once and heavy fan-out is written many frames per syscall. 0 flushes
   * at the end of every turn.
   */
  flushIntervalMs?: number;
  /**
   * How long a principal's going offline waits before its threads are told (`presence` frames),
   * in case a new socket of it authenticates meanwhile (a reconnect is then told neither way).
   * Default 500 ms; 0 tells it at once. The participants route never waits.
   */
  presenceGraceMs?: number;
}
