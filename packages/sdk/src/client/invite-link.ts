/**
 * The web UI's link for an invite: `<web UI>/invite#bubble_invite_…`.
 *
 * The token rides in the fragment, which a browser never sends to a server: it stays out of
 * access logs, proxies and referrers. The path `/invite` is one the server's web root answers
 * with the app (any path without a file extension), so the link works wherever the UI is served.
 */
export const INVITE_TOKEN_PATTERN = /^bubble_invite_[A-Za-z0-9_-]{16,}$/;
export const INVITE_PATH = '/invite';

/** The link to share for `token`, under the web UI at `webUrl` (the server's own URL when it serves the UI). */
export function inviteLink(webUrl: string, token: string): string {
  const base = new URL(webUrl);
  base.pathname = `${base.pathname.replace(/\/+$/, '')}${INVITE_PATH}`;
  base.search = '';
  base.hash = token;
  return base.toString();
}

/** The invite token of a link's path and fragment, or null when it is no invite link. */
export function inviteTokenFromLocation(pathname: string, hash: string): string | null {
  if (!/(^|\/)invite\/?$/.test(pathname)) return null;
  let token: string;
  try {
    token = decodeURIComponent(hash.replace(/^#/, '').trim());
  } catch {
    return null;
  }
  return INVITE_TOKEN_PATTERN.test(token) ? token : null;
}
