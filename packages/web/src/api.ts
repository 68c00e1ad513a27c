import { BubbleApiError, BubbleClient, browserWebSocket, type Credentials, type LiveState } from '@bubble/sdk/client';
import { STORAGE_KEYS } from './auth/auth-storage';

export { BubbleClient, BubbleApiError };
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

/** A client for one call with `token` (no live connection): naming the account of a sign-in link. */
export function createTokenClient(token: string): BubbleClient {
  return new BubbleClient({
    url: window.location.origin,
    token,
    fetch: (input, init) => globalThis.fetch(input, init),
  });
}

/** A client without credentials, for `/v1/info` before anyone signs in. */
export function createAnonymousClient(): BubbleClient {
  return new BubbleClient({ url: window.location.origin, fetch: (input, init) => globalThis.fetch(input, init) });
}

/**
 * A failure as a sentence a person can act on: `what` failed, then why and what to do. A server
 * that cannot be reached says where it was looked for (never the browser's bare "Failed to
 * fetch"); `retrying` says so where the page tries again by itself.
 */
export function describeError(
  error: unknown,
  what: string,
  options: {
    retrying?: boolean /** What to do next, where the page says it better than "Try again in a moment." */;
    next?: string;
  } = {},
): string {
  const origin = typeof window === 'undefined' ? 'this address' : window.location.origin;
  const again = ` ${options.retrying ? 'Retrying…' : (options.next ?? 'Try again in a moment.')}`;
  if (!(error instanceof BubbleApiError)) {
    if (error instanceof TypeError)
      return `${what}: can't reach the Bubble server at ${origin}. Is it running?${again}`;
    return `${what}: ${error instanceof Error ? error.message : String(error)}`;
  }
  switch (error.code) {
    case 'network':
    case 'timeout':
      return `${what}: can't reach the Bubble server at ${origin}. Is it running?${again}`;
    case 'unauthorized':
      return `${what}: your sign-in was not accepted. Sign in again.`;
    case 'forbidden':
      return `${what}: you are not allowed to do that here (${error.message}).`;
    case 'not_found':
      return `${what}: it is not there any more, or you cannot see it (${error.message}).`;
    case 'rate_limited': {
      const seconds = Number(error.details.retryAfterSeconds);
      return `${what}: the server is busy.${Number.isFinite(seconds) && seconds > 0 ? ` Try again in ${Math.ceil(seconds)} s.` : again}`;
    }
    case 'payload_too_large':
      return `${what}: it is too large for the server (${error.message}).`;
    case 'internal':
      return `${what}: the server hit an error.${again}`;
    default:
      return `${what}: ${error.message}`;
  }
}
