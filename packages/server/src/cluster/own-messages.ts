import type { LiveBusMessage } from '../live/live-bus.js';

type OutboxMessage = Exclude<LiveBusMessage, { kind: 'events' }>;

/** How long a message published on one path waits to be matched by its copy on the other before it is forgotten. */
const REMEMBER_MS = 120_000;
const MAX_REMEMBERED = 10_000;

/**
 * Keeps the non-event messages of this instance's own commits from being published twice. Each
 * reaches the bus on two paths: right after COMMIT (`onCommit`, so a revocation made here acts
 * before the request that made it is answered) and again when the outbox is read back with every
 * other instance's entries. A second `grant added` after the `revoked` that followed it would
 * tell a grants stream the grant is back; a stale role would overwrite a newer one.
 *
 * Either path may come first: the outbox is read on other connections, and a read that starts
 * as the commit lands can answer before the committing connection does. So whichever copy comes
 * first is published and remembered, and the other is dropped when it matches. Messages match
 * by content (keys sorted at every depth, so a store that reorders JSON keys matches too); each
 * remembered copy matches once.
 *
 * One more rule for grants: while an own change of a grant waits for its outbox entry, another
 * instance's change of the same grant (same thread, principal and `grantedAt`: a role change, or
 * its revocation) that is read first committed before it (the outbox is read in commit order, and
 * the grant's row lock orders the two transactions), so it is older than what was published and
 * is dropped. Changes of a grant with another `grantedAt` are published: a grants stream orders
 * those by `grantedAt` itself (`ws/grant-view.ts`), and a revocation only makes a thread
 * subscription check its access again.
 */
export class OwnMessages {
  /** Published after an own commit, waiting for the outbox entry. */
  readonly #published = new Remembered();
  /** Published from the outbox, in case it is an own commit's whose `onCommit` comes next. */
  readonly #fromOutbox = new Remembered();
  readonly #pendingGrants = new Map<string, number>();
  #sweptAt = Number.NEGATIVE_INFINITY;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A message of an own commit, right after COMMIT: whether to publish it (false: its outbox copy already was). */
  local(message: OutboxMessage): boolean {
    this.#sweep();
    const key = messageKey(message);
    if (this.#fromOutbox.take(key)) return false;
    this.#published.add(key, this.#now());
    const grant = grantKeyOf(message);
    if (grant !== null) this.#pendingGrants.set(grant, (this.#pendingGrants.get(grant) ?? 0) + 1);
    return true;
  }

  /** An entry read from the outbox: whether to publish it (false: an own message already published, or a stale grant change). */
  outbox(message: OutboxMessage): boolean {
    this.#sweep();
    const key = messageKey(message);
    const grant = grantKeyOf(message);
    if (this.#published.take(key)) {
      if (grant !== null) this.#releaseGrant(grant);
      return false;
    }
    if (grant !== null && this.#pendingGrants.has(grant)) return false;
    this.#fromOutbox.add(key, this.#now());
    return true;
  }

  #releaseGrant(grant: string): void {
    const count = (this.#pendingGrants.get(grant) ?? 1) - 1;
    if (count <= 0) this.#pendingGrants.delete(grant);
    else this.#pendingGrants.set(grant, count);
  }

  /** Forgets copies whose twin never came (say, an outbox that could not be read for minutes); at most once a second. */
  #sweep(): void {
    const now = this.#now();
    if (now - this.#sweptAt < 1_000) return;
    this.#sweptAt = now;
    const cutoff = now - REMEMBER_MS;
    for (const key of this.#published.expire(cutoff)) {
      const grant = grantKeyOf(JSON.parse(key) as OutboxMessage);
      if (grant !== null) this.#releaseGrant(grant);
    }
    this.#fromOutbox.expire(cutoff);
    if (this.#published.size + this.#fromOutbox.size > MAX_REMEMBERED) {
      this.#published.clear();
      this.#fromOutbox.clear();
      this.#pendingGrants.clear();
    }
  }
}

/** Keys with the times they were added, oldest first; each addition is taken once. */
class Remembered {
  readonly #times = new Map<string, number[]>();
  size = 0;

  add(key: string, at: number): void {
    const list = this.#times.get(key);
    if (list === undefined) this.#times.set(key, [at]);
    else list.push(at);
    this.size += 1;
  }

  take(key: string): boolean {
    const list = this.#times.get(key);
    if (list === undefined) return false;
    list.shift();
    if (list.length === 0) this.#times.delete(key);
    this.size -= 1;
    return true;
  }

  /** Drops additions older than `cutoff`; answers one key per addition dropped. */
  expire(cutoff: number): string[] {
    const dropped: string[] = [];
    for (const [key, list] of this.#times) {
      while (list.length > 0 && (list[0] as number) < cutoff) {
        list.shift();
        this.size -= 1;
        dropped.push(key);
      }
      if (list.length === 0) this.#times.delete(key);
    }
    return dropped;
  }

  clear(): void {
    this.#times.clear();
    this.size = 0;
  }
}

function grantKeyOf(message: OutboxMessage): string | null {
  if (message.kind !== 'grant') return null;
  const { threadId, principalId, grantedAt } = message.grant;
  return `${threadId}\u0000${principalId}\u0000${grantedAt}`;
}

/** JSON with object keys sorted at every depth: the same message whatever order its keys were stored in. */
export function messageKey(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) out[key] = sortKeys(item);
  }
  return out;
}
