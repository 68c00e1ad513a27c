import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIXES = { bot: 'bubble_agent_', human: 'bubble_user_' } as const;

/** A fresh plaintext token: the kind's prefix and base64url of 32 random bytes. */
export function mintTokenSecret(kind: 'human' | 'bot'): string {
  return `${TOKEN_PREFIXES[kind]}${randomBytes(32).toString('base64url')}`;
}

/** The SHA-256 of a token, the only form the store keeps. */
export function hashToken(plaintext: string): Buffer {
  return hash('sha256', plaintext, 'buffer');
}

/** The same SHA-256 as base64 text, for in-memory lookups (a one-shot digest: no Hash object, no Buffer). */
export function tokenHashKey(plaintext: string): string {
  return hash('sha256', plaintext, 'base64');
}

/** Whether the text has the shape of a local token (prefix + at least 43 base64url chars = 32 bytes). */
export function looksLikeLocalToken(text: string): boolean {
  return /^bubble_(agent|user)_[A-Za-z0-9_-]{43,}$/.test(text);
}

/** Constant-time comparison of two SHA-256 digests. */
export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether the text has the shape of a compact JWS: three base64url parts, the first one a JSON object (`eyJ…`). */
export function looksLikeJwt(text: string): boolean {
  return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(text);
}
