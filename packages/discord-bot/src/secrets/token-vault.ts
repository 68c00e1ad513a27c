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

/**
 * Users' tokens, sealed at rest (AES-256-GCM) and bound to the user and the
 * kind, so a row copied onto another user or kind does not open.
 */
export class TokenVault {
  readonly #store: StateStore;
  readonly #box: SecretBox;

  constructor(store: StateStore, box: SecretBox) {
    this.#store = store;
    this.#box = box;
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
    try {
      return { status: 'linked', token: this.#box.open(row.sealed, context(userId, kind)) };
    } catch (error) {
      if (error instanceof SecretBoxError) return { status: 'unreadable', reason: error.code };
      throw error;
    }
  }

  /** Removes every token of the user; the number removed. */
  unlink(userId: string): number {
    return this.#store.deleteTokens(userId);
  }

  /** Tokens sealed under another secretsKey (they no longer open). */
  foreignTokens(): number {
    return this.#store.countForeignTokens(this.#box.keyId);
  }
}

function context(userId: string, kind: TokenKind): string {
  return `${kind}:${userId}`;
}
