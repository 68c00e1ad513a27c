import { BubbleClient, browserWebSocket, type Credentials, type LiveState } from '@bubble/sdk/client';
import { STORAGE_KEYS } from './auth/auth-storage';

export { BubbleClient };
export { BubbleApiError } from '@bubble/sdk/client';
export type { LiveState };
export { isUserToken, userTokenFromFragment as tokenFromFragment } from './auth/auth-controller';

/** A token an older version kept in localStorage moves to this tab's sessionStorage, once. */
export function migrateLegacyToken(): void {
  try {
    const legacy = localStorage.getItem(STORAGE_KEYS.localToken);
    if (legacy !== null) {
      localStorage.removeItem(STORAGE_KEYS.localToken);
      sessionStorage.setItem(STORAGE_KEYS.localToken, legacy);
    }
  } catch {
    // storage refused
  }
}

/**
 * A client for this page's origin; the live connection reports its state for the status line.
 * Its socket is the browser's own WebSocket: it cannot pause reading, so a subscription whose
 * reader falls behind catches up by replay instead (the sdk's `subscription-mux.ts`).
 */
export function createClient(credentials: Credentials, onLiveState: (state: LiveState) => void): BubbleClient {
  return new BubbleClient({
    url: window.location.origin,
    credentials,
    // Called through a closure: the browser's fetch refuses a `this` other than window.
    fetch: (input, init) => globalThis.fetch(input, init),
    live: {
      webSocketFactory: browserWebSocket,
      onStateChange: (state) => onLiveState(state),
      reconnectCapMs: 5_000,
    },
  });
}

/** A client without credentials, for `/v1/info` before anyone signs in. */
export function createAnonymousClient(): BubbleClient {
  return new BubbleClient({ url: window.location.origin, fetch: (input, init) => globalThis.fetch(input, init) });
}
