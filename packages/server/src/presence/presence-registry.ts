/** A principal came online (`true`: its first authenticated WebSocket anywhere) or went offline (its last one closed). */
export type PresenceListener = (principalId: string, online: boolean) => void;

/**
 * Who is online, as this instance knows it: a principal is online while it holds an authenticated
 * WebSocket on this instance (`setLocal`, told by the WebSocket hub on the first socket and the
 * last) or, on a database shared by several instances, on another live instance (`setRemote` and
 * `replaceRemote`, told by `cluster/cluster-presence.ts`). Listeners hear every change of the
 * whole answer, once, as it happens: a principal online on two instances that closes its sockets
 * on one stays online.
 *
 * No I/O and no timers: what is sent to whom, and when, is `ws/presence-fanout.ts`'s business.
 */
export class PresenceRegistry {
  readonly #local = new Set<string>();
  /** Principal → the other instances it is online on. */
  readonly #remote = new Map<string, Set<string>>();
  readonly #listeners = new Set<PresenceListener>();
  readonly #localListeners = new Set<PresenceListener>();

  isOnline(principalId: string): boolean {
    return this.#local.has(principalId) || this.#remote.has(principalId);
  }

  /** The principals with an authenticated socket on this instance. */
  localPrincipals(): string[] {
    return [...this.#local];
  }

  /** Every change of a principal's presence, wherever it comes from. Returns the unsubscribe function. */
  onChange(listener: PresenceListener): () => void {
    return subscribe(this.#listeners, listener);
  }

  /** Every change of this instance's own sockets (what the other instances must be told). */
  onLocalChange(listener: PresenceListener): () => void {
    return subscribe(this.#localListeners, listener);
  }

  /** This instance: the first socket of a principal authenticated (`true`) or its last one closed. */
  setLocal(principalId: string, online: boolean): void {
    if (this.#local.has(principalId) === online) return;
    const before = this.isOnline(principalId);
    if (online) this.#local.add(principalId);
    else this.#local.delete(principalId);
    for (const listener of [...this.#localListeners]) listener(principalId, online);
    this.#settle(principalId, before);
  }

  /** Another instance says a principal came online or went offline there. */
  setRemote(instanceId: string, principalId: string, online: boolean): void {
    const before = this.isOnline(principalId);
    const instances = this.#remote.get(principalId);
    if (online) {
      if (instances === undefined) this.#remote.set(principalId, new Set([instanceId]));
      else instances.add(instanceId);
    } else if (instances !== undefined) {
      instances.delete(instanceId);
      if (instances.size === 0) this.#remote.delete(principalId);
    }
    this.#settle(principalId, before);
  }

  /**
   * Replaces what is known of the other instances with a fresh read of the database (`snapshot`:
   * principal → instances), except for the (instance, principal) pairs in `keep`: a change of
   * theirs was heard while the read was in flight, so what this registry holds for them may be
   * newer than the read. Principals that end up changed are told to the listeners.
   */
  replaceRemote(snapshot: ReadonlyMap<string, ReadonlySet<string>>, keep: ReadonlySet<string> = new Set()): void {
    const next = new Map<string, Set<string>>();
    for (const [principalId, instances] of snapshot) next.set(principalId, new Set(instances));
    for (const pair of keep) {
      const [instanceId, principalId] = splitPair(pair);
      const held = this.#remote.get(principalId)?.has(instanceId) === true;
      let instances = next.get(principalId);
      if (held) {
        if (instances === undefined) next.set(principalId, (instances = new Set()));
        instances.add(instanceId);
      } else {
        instances?.delete(instanceId);
        if (instances?.size === 0) next.delete(principalId);
      }
    }
    const touched = new Set([...this.#remote.keys(), ...next.keys()]);
    for (const principalId of touched) {
      const before = this.isOnline(principalId);
      const instances = next.get(principalId);
      if (instances === undefined) this.#remote.delete(principalId);
      else this.#remote.set(principalId, instances);
      this.#settle(principalId, before);
    }
  }

  #settle(principalId: string, before: boolean): void {
    const after = this.isOnline(principalId);
    if (after === before) return;
    for (const listener of [...this.#listeners]) listener(principalId, after);
  }
}

/** The key of one (instance, principal) pair in `replaceRemote`'s `keep`. */
export function presencePair(instanceId: string, principalId: string): string {
  return `${instanceId}\u0000${principalId}`;
}

function splitPair(pair: string): [string, string] {
  const at = pair.indexOf('\u0000');
  return [pair.slice(0, at), pair.slice(at + 1)];
}

function subscribe(listeners: Set<PresenceListener>, listener: PresenceListener): () => void {
  // Wrapped, so the same function subscribed twice is two subscriptions.
  const entry: PresenceListener = (principalId, online) => listener(principalId, online);
  listeners.add(entry);
  return () => {
    listeners.delete(entry);
  };
}
