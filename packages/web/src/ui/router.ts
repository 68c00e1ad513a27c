import { useEffect, useState } from 'preact/hooks';

export type Route = { page: 'home' } | { page: 'thread'; threadId: string } | { page: 'bots' };

/** `/threads/:id` (ids may hold dots), `/bots`, anything else home. */
export function parseRoute(pathname: string): Route {
  const thread = /^\/threads\/([^/]+)\/?$/.exec(pathname);
  if (thread?.[1]) return { page: 'thread', threadId: decodeURIComponent(thread[1]) };
  if (pathname === '/bots' || pathname === '/bots/') return { page: 'bots' };
  return { page: 'home' };
}

export const threadPath = (threadId: string): string => `/threads/${encodeURIComponent(threadId)}`;

const listeners = new Set<() => void>();

export function navigate(path: string): void {
  if (path === window.location.pathname) return;
  history.pushState(null, '', path);
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
