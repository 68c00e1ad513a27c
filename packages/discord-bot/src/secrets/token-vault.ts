import type { StateStore, TokenKind } from '../store/state-store.js';
import { SecretBoxError, type SecretBox } from './secret-box.js';

export type TokenLookup =
  | { status: 'linked'; token: string }
  | { status: 'missing' }
  /** Stored, but it cannot be opened: sealed with another secretsKey, or damaged. The user must link again. */
  | { status: 'unreadable'; reason: string };

/** `claude setup-token` prints a long-lived OAuth token that starts like this; nothing stricter is checked (the format can change). */
export const CLAUDE_TOKEN_PREFIX = 'sk-ant-oat';

export function looksLikeClaudeToken(value: string): boolean {
  return value.trim().startsWith(CLAUDE_TOKEN_PREFIX);
}

/** What re-sealing after a key rotation did: how many tokens now use the current key, and those no key opens. */
export interface ResealReport {
  resealed: number;
  unreadable: Array<{ userId: string; kind: TokenKind; reason: string }>;
}

/**
 * Users' tokens, sealed at rest (AES-256-GCM) and bound to the user and the
 * kind, so a row copied onto another user or kind does not open. New tokens
 * are sealed with the current key; `previous` keys (a rotation) still open
 * what they sealed, until `resealAll` moves it to the current key.
 */
export class TokenVault {
  readonly #store: StateStore;
  readonly #box: SecretBox;
  readonly #boxes: readonly SecretBox[];

  constructor(store: StateStore, box: SecretBox, previous: readonly SecretBox[] = []) {
    this.#store = store;
    this.#box = box;
    this.#boxes = [box, ...previous];
  }

  link(userId: string, kind: TokenKind, token: string): void {
    this.#store.putSealedToken(userId, kind, {
      sealed: this.#box.seal(token.trim(), context(userId, kind)),
      keyId: this.#box.keyId,
    });
  }

  lookup(userId: string, kind: TokenKind): TokenLookup {
    const row = this.#store.sealedToken(userId, kind);
    if (row === undefined) return { status: 'missing' };
    return this.#open(row.sealed, userId, kind);
  }

  /** Tries the current key, then the previous ones in order; the first key that opens it wins. */
  #open(sealed: string, userId: string, kind: TokenKind): TokenLookup {
    let reason = 'wrong_key';
    for (const box of this.#boxes) {
      try {
        return { status: 'linked', token: box.open(sealed, context(userId, kind)) };
      } catch (error) {
        if (!(error instanceof SecretBoxError)) throw error;
        // "wrong_key" only says this key is not the one; a more telling reason from another key is kept.
        if (error.code !== 'wrong_key' || reason === 'wrong_key') reason = error.code;
      }
    }
    return { status: 'unreadable', reason };
  }

  /** After a key rotation: every token a previous key opens is sealed again with the current key. */
  resealAll(): ResealReport {
    const report: ResealReport = { resealed: 0, unreadable: [] };
    for (const row of this.#store.tokensNotSealedWith(this.#box.keyId)) {
      const opened = this.#open(row.sealed, row.userId, row.kind);
      if (opened.status !== 'linked') {
        report.unreadable.push({
          userId: row.userId,
          kind: row.kind,
          reason: opened.status === 'unreadable' ? opened.reason : 'missing',
        });
        continue;
      }
      const next = { sealed: this.#box.seal(opened.token, context(row.userId, row.kind)), keyId: this.#box.keyId };
      if (this.#store.replaceSealedToken(row.userId, row.kind, row.sealed, next)) report.resealed += 1;
    }
    return report;
  }

  /** Removes every token of the user; the number removed. */
  unlink(userId: string): number {
    return this.#store.deleteTokens(userId);
  }
}

function context(userId: string, kind: TokenKind): string {
  return `${kind}:${userId}`;
}
