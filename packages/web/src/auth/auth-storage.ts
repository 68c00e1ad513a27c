import { INVITE_TOKEN_PATTERN } from '@bubble/sdk/client';
import { parseSession, type OidcSession } from './oidc-session';
import { parsePendingSignIn, type PendingSignIn } from './pending-sign-in';

/**
 * Everything sign-in keeps in this tab's sessionStorage: it survives a reload and the round trip
 * to the identity provider, ends with the tab, and is not shared with other tabs or left on disk
 * for the next person at this browser. One credential at a time: storing one forgets the other.
 */
export interface AuthStorage {
  localToken(): string | null;
  setLocalToken(token: string): void;
  oidcSession(): OidcSession | null;
  setOidcSession(session: OidcSession): void;
  /** Forgets both credentials (sign out). */
  clearCredentials(): void;
  savePendingSignIn(pending: PendingSignIn): void;
  /** The pending sign-in, removed as it is read (a callback is used once). */
  takePendingSignIn(now: number): PendingSignIn | null;
  /** An invite link opened before signing in, joined once signed in. */
  pendingInvite(): string | null;
  setPendingInvite(token: string | null): void;
}

export const STORAGE_KEYS = Object.freeze({
  localToken: 'bubble.token',
  oidcSession: 'bubble.oidc.session',
  pendingSignIn: 'bubble.oidc.pending',
  pendingInvite: 'bubble.invite',
});

/** Over `storage` (sessionStorage in the app); a storage that refuses writes keeps things for this page only. */
export function createAuthStorage(storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>): AuthStorage {
  const get = (key: string): string | null => {
    try {
      return storage.getItem(key);
    } catch {
      return null;
    }
  };
  const set = (key: string, value: string | null): void => {
    try {
      if (value === null) storage.removeItem(key);
      else storage.setItem(key, value);
    } catch {
      // storage refused: kept in memory by the caller for this page only
    }
  };
  return {
    localToken: () => get(STORAGE_KEYS.localToken),
    setLocalToken(token) {
      set(STORAGE_KEYS.oidcSession, null);
      set(STORAGE_KEYS.localToken, token);
    },
    oidcSession: () => parseSession(get(STORAGE_KEYS.oidcSession)),
    setOidcSession(session) {
      set(STORAGE_KEYS.localToken, null);
      set(STORAGE_KEYS.oidcSession, JSON.stringify(session));
    },
    clearCredentials() {
      set(STORAGE_KEYS.localToken, null);
      set(STORAGE_KEYS.oidcSession, null);
    },
    savePendingSignIn: (pending) => set(STORAGE_KEYS.pendingSignIn, JSON.stringify(pending)),
    takePendingSignIn(now) {
      const pending = parsePendingSignIn(get(STORAGE_KEYS.pendingSignIn), now);
      set(STORAGE_KEYS.pendingSignIn, null);
      return pending;
    },
    pendingInvite() {
      const token = get(STORAGE_KEYS.pendingInvite);
      return token !== null && INVITE_TOKEN_PATTERN.test(token) ? token : null;
    },
    setPendingInvite: (token) => set(STORAGE_KEYS.pendingInvite, token),
  };
}
