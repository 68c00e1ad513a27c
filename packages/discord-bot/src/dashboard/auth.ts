import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a browser session lasts; an operator signs in again after a working day. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Sessions live in memory; the cap keeps a flood of sign-ins from growing it without bound. */
export const MAX_SESSIONS = 1000;
/** Failed sign-ins allowed per address within one window before every attempt is refused. */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 10 * 60 * 1000;
/** Each wrong token waits this long before its answer, so guessing one by one is slow. */
export const FAILURE_DELAY_MS = 400;
/** Addresses tracked at once; beyond this the oldest are forgotten rather than growing memory. */
const MAX_TRACKED_ADDRESSES = 10_000;

export const SESSION_COOKIE = 'bubble_dashboard_session';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * The dashboard token, kept only as a digest. Comparing digests of equal
 * length with `timingSafeEqual` takes the same time whatever the candidate's
 * length or content, so response times tell an attacker nothing.
 */
export class TokenCheck {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = sha256(token);
  }

  matches(candidate: string): boolean {
    return timingSafeEqual(sha256(candidate), this.#digest);
  }
}

/**
 * Random session ids held in memory (a restart signs everyone out, which is
 * fine for an operator page). The map is keyed by the id's digest so the raw
 * id never sits in memory next to its lookup key.
 */
export class SessionStore {
  readonly #sessions = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  create(): string {
    this.#prune();
    if (this.#sessions.size >= MAX_SESSIONS) {
      // Maps iterate in insertion order: the first key is the oldest session.
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(sha256(id).toString('hex'), this.#now() + SESSION_TTL_MS);
    return id;
  }

  isValid(id: string): boolean {
    const key = sha256(id).toString('hex');
    const expiresAt = this.#sessions.get(key);
    if (expiresAt === undefined) return false;
    if (expiresAt <= this.#now()) {
      this.#sessions.delete(key);
      return false;
    }
    return true;
  }

  end(id: string): void {
    this.#sessions.delete(sha256(id).toString('hex'));
  }

  clear(): void {
    this.#sessions.clear();
  }

  #prune(): void {
    const now = this.#now();
    for (const [key, expiresAt] of this.#sessions) if (expiresAt <= now) this.#sessions.delete(key);
  }
}

interface FailureRecord {
  count: number;
  windowStart: number;
}

/**
 * Counts wrong tokens per remote address. The per-answer delay slows a single
 * guesser; the cap stops one that sends guesses in parallel.
 */
export class SignInThrottle {
  readonly #failures = new Map<string, FailureRecord>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Milliseconds until this address may try again, or 0 when it may try now. */
  blockedFor(address: string): number {
    const record = this.#current(address);
    if (record === undefined || record.count < MAX_FAILURES) return 0;
    return record.windowStart + FAILURE_WINDOW_MS - this.#now();
  }

  fail(address: string): void {
    const record = this.#current(address);
    if (record !== undefined) {
      record.count += 1;
      return;
    }
    if (this.#failures.size >= MAX_TRACKED_ADDRESSES) this.#forgetOldest();
    this.#failures.set(address, { count: 1, windowStart: this.#now() });
  }

  succeed(address: string): void {
    this.#failures.delete(address);
  }

  #current(address: string): FailureRecord | undefined {
    const record = this.#failures.get(address);
    if (record === undefined) return undefined;
    if (record.windowStart + FAILURE_WINDOW_MS <= this.#now()) {
      this.#failures.delete(address);
      return undefined;
    }
    return record;
  }

  #forgetOldest(): void {
    const oldest = this.#failures.keys().next().value;
    if (oldest !== undefined) this.#failures.delete(oldest);
  }
}

/** Every value of the named cookie (a browser may send the same name twice, from different paths). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** The token of an `Authorization: Bearer <token>` header, or undefined for any other header. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
}
