import type { Logger } from 'pino';
import { newInstanceId } from '../domain/ids.js';
import type { LiveBus } from '../live/live-bus.js';
import { presencePair, type PresenceRegistry } from '../presence/presence-registry.js';
import type { PresenceFeed } from '../store/cluster-feed.js';
import { failureLog } from './failure-log.js';

export interface ClusterPresenceOptions {
  /** How often this instance proves it is alive. Default 2,000 ms. */
  presenceHeartbeatMs?: number;
  /**
   * An instance whose heartbeat is older than this is gone (killed, cut off): its principals are
   * offline for the others. Default 10,000 ms.
   */
  presenceExpiryMs?: number;
  /** How often the other instances' rows are read again (expired instances, lost messages). Default 2,000 ms. */
  presenceResyncMs?: number;
  /** Instances silent this long are deleted with their rows. Default 60,000 ms. */
  presenceSweepAfterMs?: number;
}

export const PRESENCE_DEFAULTS = Object.freeze({
  presenceHeartbeatMs: 2_000,
  presenceExpiryMs: 10_000,
  presenceResyncMs: 2_000,
  presenceSweepAfterMs: 60_000,
});

/** How often (at most) a heartbeat also sweeps instances that stopped long ago. */
const SWEEP_EVERY_MS = 10_000;

export interface ClusterPresenceStart extends ClusterPresenceOptions {
  feed: PresenceFeed;
  registry: PresenceRegistry;
  /** The server's bus, joined to the cluster: the other instances' `presence` messages come through it. */
  bus: LiveBus;
  logger: Logger;
  instanceId?: string;
}

/**
 * Presence across several instances on one database. This instance:
 *
 * - registers itself and moves its heartbeat every `presenceHeartbeatMs` (the database's clock);
 * - writes each change of its own sockets (`PresenceRegistry.onLocalChange`: a principal's first
 *   socket here, or its last) as a row through the group commit, with a `presence` outbox message
 *   that wakes the others at once (NOTIFY, or their 250 ms poll);
 * - applies the other instances' messages to the registry as they arrive, and every
 *   `presenceResyncMs` replaces what it holds of them with a fresh read of the rows of instances
 *   whose heartbeat is younger than `presenceExpiryMs`. That read is the truth: it drops an
 *   instance that stopped beating (kill -9) and repairs anything a lost message left wrong. A
 *   message heard while the read is in flight may be newer than it, so that pair keeps what the
 *   message said (`PresenceRegistry.replaceRemote`).
 *
 * So a principal online only on an instance killed with -9 is offline everywhere else within
 * `presenceExpiryMs + presenceResyncMs` (12 s by default) plus one read, then the frames' grace.
 * A write that failed (the database unreachable) marks this instance's rows as suspect; the next
 * heartbeat that gets through rewrites them to match its sockets, and so does one that finds its
 * registration swept (it was cut off for a minute).
 */
export class ClusterPresence {
  readonly instanceId: string;
  readonly #feed: PresenceFeed;
  readonly #registry: PresenceRegistry;
  readonly #options: Required<ClusterPresenceOptions>;
  readonly #writeFailures: (error: unknown, fields?: Record<string, unknown>) => void;
  readonly #readFailures: (error: unknown) => void;
  readonly #beatFailures: (error: unknown) => void;
  readonly #stops: Array<() => void> = [];
  /** Pairs heard from the bus while a resync read is in flight; null when none is. */
  #heardDuringRead: Set<string> | null = null;
  /** A write failed: the rows may not match this instance's sockets. */
  #suspect = false;
  #beating = false;
  #sweptAt = Number.NEGATIVE_INFINITY;
  #closed = false;

  private constructor(start: ClusterPresenceStart) {
    this.instanceId = start.instanceId ?? newInstanceId();
    this.#feed = start.feed;
    this.#registry = start.registry;
    this.#options = {
      presenceHeartbeatMs: start.presenceHeartbeatMs ?? PRESENCE_DEFAULTS.presenceHeartbeatMs,
      presenceExpiryMs: start.presenceExpiryMs ?? PRESENCE_DEFAULTS.presenceExpiryMs,
      presenceResyncMs: start.presenceResyncMs ?? PRESENCE_DEFAULTS.presenceResyncMs,
      presenceSweepAfterMs: start.presenceSweepAfterMs ?? PRESENCE_DEFAULTS.presenceSweepAfterMs,
    };
    const logger = start.logger.child({ instanceId: this.instanceId });
    this.#writeFailures = failureLog(logger, 'writing presence failed; the next heartbeat rewrites it');
    this.#readFailures = failureLog(logger, "reading the other instances' presence failed; retrying");
    this.#beatFailures = failureLog(logger, 'the presence heartbeat failed; retrying');
    this.#stops.push(
      start.bus.subscribe((message) => {
        if (message.kind !== 'presence' || message.instanceId === this.instanceId) return;
        this.#heardDuringRead?.add(presencePair(message.instanceId, message.principalId));
        this.#registry.setRemote(message.instanceId, message.principalId, message.online);
      }),
    );
  }

  /** Registers the instance, reads who is online on the others, and starts the timers. */
  static async start(start: ClusterPresenceStart): Promise<ClusterPresence> {
    const presence = new ClusterPresence(start);
    try {
      await start.feed.registerInstance(presence.instanceId);
    } catch (error) {
      presence.#stop();
      throw error;
    }
    presence.#stops.push(
      presence.#registry.onLocalChange((principalId, online) => presence.#write(principalId, online)),
    );
    // Sockets this registry already counts (none, when the server starts) are written too.
    if (presence.#registry.localPrincipals().length > 0) presence.#suspect = true;
    await presence.resync();
    const heartbeat = setInterval(() => void presence.heartbeat(), presence.#options.presenceHeartbeatMs);
    const resync = setInterval(() => void presence.resync(), presence.#options.presenceResyncMs);
    heartbeat.unref();
    resync.unref();
    presence.#stops.push(
      () => clearInterval(heartbeat),
      () => clearInterval(resync),
    );
    if (presence.#suspect) await presence.heartbeat();
    return presence;
  }

  /** One heartbeat: proves this instance alive, registers it again if it was swept, rewrites suspect rows. Never rejects. */
  async heartbeat(): Promise<void> {
    if (this.#beating || this.#closed) return;
    this.#beating = true;
    try {
      if (!(await this.#feed.heartbeatInstance(this.instanceId))) {
        await this.#feed.registerInstance(this.instanceId);
        this.#suspect = true;
      }
      if (this.#suspect) {
        this.#suspect = false;
        try {
          await this.#feed.replacePresence(this.instanceId, this.#registry.localPrincipals());
        } catch (error) {
          this.#suspect = true;
          throw error;
        }
      }
      if (Date.now() - this.#sweptAt >= SWEEP_EVERY_MS) {
        this.#sweptAt = Date.now();
        await this.#feed.sweepInstances(this.#options.presenceSweepAfterMs);
      }
    } catch (error) {
      if (!this.#closed) this.#beatFailures(error);
    } finally {
      this.#beating = false;
    }
  }

  /** Replaces what the registry holds of the other instances with the database's rows of live ones. Never rejects. */
  async resync(): Promise<void> {
    if (this.#heardDuringRead !== null || this.#closed) return;
    const heard = new Set<string>();
    this.#heardDuringRead = heard;
    try {
      const rows = await this.#feed.readPresence(this.#options.presenceExpiryMs);
      if (this.#closed) return;
      const snapshot = new Map<string, Set<string>>();
      for (const { instanceId, principalId } of rows) {
        if (instanceId === this.instanceId) continue;
        let instances = snapshot.get(principalId);
        if (instances === undefined) snapshot.set(principalId, (instances = new Set()));
        instances.add(instanceId);
      }
      this.#registry.replaceRemote(snapshot, heard);
    } catch (error) {
      this.#readFailures(error);
    } finally {
      this.#heardDuringRead = null;
    }
  }

  /** Stops the timers and removes this instance's rows and registration (each row announced as offline). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop();
    try {
      await this.#feed.removeInstance(this.instanceId);
    } catch (error) {
      // The others drop this instance once its heartbeat is old enough.
      this.#writeFailures(error);
    }
  }

  #write(principalId: string, online: boolean): void {
    this.#feed.putPresence(this.instanceId, principalId, online).catch((error: unknown) => {
      this.#suspect = true;
      this.#writeFailures(error, { principalId, online });
    });
  }

  #stop(): void {
    for (const stop of this.#stops.splice(0)) stop();
  }
}
