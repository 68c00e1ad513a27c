import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';

/**
 * Serves a built single-page web app from a folder at `/`. The API always wins:
 * `/v1`, `/v1/*` and `/healthz` are never answered from here. A GET or HEAD of
 * an existing file answers it; a path that matches no file and does not end in
 * a file type served here (`.js`, `.css`, …) answers `index.html` (the app routes in the browser); anything else is
 * left to the API router (which answers 404 in the protocol's error shape).
 *
 * Files under `assets/` carry a content hash in their names (the bundler's
 * output), so they are cached for a year as immutable; everything else is
 * revalidated on each load, so a rebuilt app is picked up at once.
 */
export type StaticWebRoot = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.webmanifest': 'application/manifest+json',
};

/**
 * The page runs only its own scripts and styles, talks only to this server
 * (HTTP and its WebSocket), draws images only from itself (or data:/blob:),
 * posts forms nowhere else, and may not be framed by any other page.
 */
export const WEB_CSP = webCsp([]);

/**
 * The page's CSP, letting it also fetch from `connectOrigins`: the identity provider's origins
 * (discovery and the token endpoint), where the server signs people in with one. Sign-in itself
 * is a navigation to the provider, which `connect-src` does not govern. `createStaticWebRoot`
 * asks for them each time it serves the page (they may take a moment: the provider's metadata
 * may still have to be fetched).
 */
export function webCsp(connectOrigins: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Whether a request path belongs to the API (never served from the web root). */
export function isApiPath(pathname: string): boolean {
  return pathname === '/v1' || pathname.startsWith('/v1/') || pathname === '/healthz';
}

export function createStaticWebRoot(
  webRoot: string,
  options: { connectOrigins?: () => readonly string[] | Promise<readonly string[]> } = {},
): StaticWebRoot {
  const root = resolve(webRoot);
  const index = join(root, 'index.html');

  const send = async (
    req: IncomingMessage,
    res: ServerResponse,
    file: string,
    size: number,
    cache: string,
  ): Promise<void> => {
    const headers: Record<string, string | number> = {
      'content-type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': size,
      'cache-control': cache,
      'x-content-type-options': 'nosniff',
    };
    if (file === index) {
      // The sign-in link carries the token in the fragment; keep it out of any referrer.
      headers['referrer-policy'] = 'no-referrer';
      headers['content-security-policy'] =
        options.connectOrigins === undefined ? WEB_CSP : webCsp(await options.connectOrigins());
      headers['x-frame-options'] = 'DENY';
    }
    res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    await new Promise<void>((done) => {
      const stream = createReadStream(file);
      stream.on('error', () => {
        res.destroy();
        done();
      });
      stream.on('end', done);
      stream.pipe(res);
    });
  };

  const fileSize = async (path: string): Promise<number | null> => {
    try {
      const info = await stat(path);
      return info.isFile() ? info.size : null;
    } catch {
      return null;
    }
  };

  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const rawUrl = req.url ?? '/';
    const q = rawUrl.search(/[?#]/);
    const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
    if (isApiPath(rawPath)) return false;
    let pathname: string;
    try {
      pathname = decodeURIComponent(rawPath);
    } catch {
      return false;
    }
    if (pathname.includes('\0')) return false;
    const candidate = resolve(root, `.${pathname}`);
    if (candidate !== root && !candidate.startsWith(root + sep)) return false;

    const relative = candidate.slice(root.length + 1);
    if (candidate !== root) {
      const size = await fileSize(candidate);
      if (size !== null) {
        const immutable = relative.startsWith(`assets${sep}`);
        await send(req, res, candidate, size, immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
        return true;
      }
      // A missing file of a kind we serve (`/assets/x.js`) is a 404, not the app:
      // app routes hold ids with dots (`th_x.sub-a8f3k-2q9`), which are no file types.
      if (CONTENT_TYPES[extname(candidate).toLowerCase()] !== undefined) return false;
    }
    const size = await fileSize(index);
    if (size === null) return false;
    await send(req, res, index, size, 'no-cache');
    return true;
  };
}
