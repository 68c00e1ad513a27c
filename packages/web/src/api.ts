import { BubbleClient, type LiveState } from '@bubble/sdk/client';

export { BubbleClient };
export { BubbleApiError } from '@bubble/sdk/client';
export type { LiveState };

const TOKEN_KEY = 'bubble.token';
const TOKEN_PATTERN = /^bubble_user_[A-Za-z0-9_-]{20,}$/;

/** The token in a sign-in link's fragment (`#token=bubble_user_…`), or null. */
export function tokenFromFragment(hash: string): string | null {
  const params = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const token = params.get('token');
  return token !== null && TOKEN_PATTERN.test(token) ? token : null;
}

export function isUserToken(token: string): boolean {
  return TOKEN_PATTERN.test(token.trim());
}

/**
 * The token lives in this tab's sessionStorage (and the client's memory): it
 * survives a reload, ends with the tab, and is not shared with other tabs or
 * left on disk for the next person at this browser. A token an older version
 * kept in localStorage is moved over once.
 */
export function loadToken(): string | null {
  try {
    const legacy = localStorage.getItem(TOKEN_KEY);
    if (legacy !== null) {
      localStorage.removeItem(TOKEN_KEY);
      sessionStorage.setItem(TOKEN_KEY, legacy);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function saveToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // storage refused: the token lives for this page only
  }
}

/** A client for this page's origin; the live connection reports its state for the status line. */
export function createClient(token: string, onLiveState: (state: LiveState) => void): BubbleClient {
  return new BubbleClient({
    url: window.location.origin,
    token,
    // Called through a closure: the browser's fetch refuses a `this` other than window.
    fetch: (input, init) => globalThis.fetch(input, init),
    live: { onStateChange: (state) => onLiveState(state), reconnectCapMs: 5_000 },
  });
}
