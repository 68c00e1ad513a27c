import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'home' }
  | { page: 'thread'; threadId: string }
  | { page: 'bots' }
  | { page: 'tokens' }
  /** An invite link (its token is kept in the tab's storage, out of the address bar). */
  | { page: 'invite' };

export const TOKENS_PATH = '/tokens';

/** `/threads/:id` (ids may hold dots), `/bots`, `/tokens`, `/invite`, anything else home. */
export function parseRoute(pathname: string): Route {
  const thread = /^\/threads\/([^/]+)\/?$/.exec(pathname);
  if (thread?.[1]) return { page: 'thread', threadId: decodeURIComponent(thread[1]) };
  const path = pathname.replace(/\/+$/, '');
  if (path === '/bots') return { page: 'bots' };
  if (path === TOKENS_PATH) return { page: 'tokens' };
  if (path === '/invite') return { page: 'invite' };
  return { page: 'home' };
}

export const threadPath = (threadId: string): string => `/threads/${encodeURIComponent(threadId)}`;

const listeners = new Set<() => void>();

/** Goes to `path` in the app; `replace` rewrites the current history entry instead of adding one. */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace === true) history.replaceState(null, '', path);
  else if (path === window.location.pathname) return;
  else history.pushState(null, '', path);
  for (const l of listeners) l();
}

export function useRoute(): Route {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.pathname));
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return route;
}
