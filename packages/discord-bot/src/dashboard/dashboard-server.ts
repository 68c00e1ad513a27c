import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  FAILURE_DELAY_MS,
  SESSION_COOKIE,
  SessionStore,
  SignInThrottle,
  TokenCheck,
  bearerToken,
  clearedSessionCookie,
  cookieValues,
  sessionCookie,
} from './auth.js';
import { dashboardPage, signInPage } from './pages.js';

export interface DashboardRun {
  /** Run id. */
  id: string;
  /** Discord channel/thread id. */
  threadId: string;
  threadName: string | undefined;
  /** For a link https://discord.com/channels/{guildId}/{threadId}. */
  guildId: string | undefined;
  userId: string;
  userName: string;
  mode: 'chat' | 'agentic' | 'ask';
  state: 'running' | 'queued';
  /** Queue position (1 = next) when queued. */
  position: number | undefined;
  /** Epoch ms. */
  enqueuedAt: number;
  /** Epoch ms when running. */
  startedAt: number | undefined;
}

export interface DashboardSource {
  runs(): DashboardRun[];
  /** Aborts a running or queued run; false when the id is unknown (already finished). */
  abort(id: string): boolean;
}

export interface DashboardOptions {
  host: string;
  /** 0 = ephemeral. */
  port: number;
  /** The dashboard token (from config); never logged. */
  token: string;
  source: DashboardSource;
  logger: Logger;
  now?: () => number;
}

export interface Dashboard {
  readonly url: string;
  close(): Promise<void>;
}

/** Requests carry at most a sign-in form; anything bigger is refused before it is buffered. */
export const BODY_LIMIT_BYTES = 16 * 1024;
/** The header a same-origin script adds; a cross-site form cannot set it. */
export const CSRF_HEADER = 'x-bubble-dashboard';

type Auth =
  | { kind: 'session'; sessionId: string }
  | { kind: 'bearer' }
  | { kind: 'none' }
  | { kind: 'wrong' }
  | { kind: 'throttled'; retryAfterMs: number };

interface Context {
  req: IncomingMessage;
  res: ServerResponse;
  address: string;
  body: Buffer;
  auth: Auth;
  params: string[];
}

type Handler = (ctx: Context) => void | Promise<void>;

interface Route {
  pattern: RegExp;
  methods: Partial<Record<'GET' | 'POST', Handler>>;
}

const JSON_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Headers every answer carries: nothing is cached, framed, sniffed or sent on as a referrer. */
function baseHeaders(csp: string): Record<string, string> {
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}

/** The page may run only the script and style carrying this response's nonce, and talk only to its own origin. */
function pageCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    'img-src data:',
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...baseHeaders(JSON_CSP),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function sendPage(res: ServerResponse, status: number, render: (nonce: string) => string): void {
  const nonce = randomBytes(16).toString('base64');
  const html = render(nonce);
  res.writeHead(status, {
    ...baseHeaders(pageCsp(nonce)),
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(html)),
  });
  res.end(html);
}

function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { ...baseHeaders(JSON_CSP), Location: location, 'Content-Length': '0', ...headers });
  res.end();
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Why a cookie-authenticated state change looks cross-site, or undefined when
 * it is fine. SameSite=Strict already keeps the cookie off cross-site
 * requests; this is the second lock, for old browsers and same-site
 * neighbours: a plain cross-site form can set neither the custom header nor a
 * JSON content type, and a browser's Origin names the page that sent it.
 */
function csrfProblem(req: IncomingMessage): string | undefined {
  const marked = req.headers[CSRF_HEADER] === '1' || mediaType(req) === 'application/json';
  if (!marked) return 'send the X-Bubble-Dashboard: 1 header (or Content-Type: application/json) with this request';
  return originProblem(req);
}

/**
 * A present Origin must be this host (http, or https behind a TLS proxy), and
 * a present Sec-Fetch-Site must say same-origin. The page's
 * `Referrer-Policy: no-referrer` makes a browser send `Origin: null` on the
 * sign-in form's POST, so "null" passes only when Sec-Fetch-Site vouches for it.
 */
function originProblem(req: IncomingMessage): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return 'cross-site request refused';
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (origin === 'null') return site === 'same-origin' ? undefined : 'cross-origin request refused';
  const host = req.headers.host;
  if (host === undefined || (origin !== `http://${host}` && origin !== `https://${host}`))
    return 'cross-origin request refused';
  return undefined;
}

type BodyResult = { kind: 'ok'; body: Buffer } | { kind: 'too-large' } | { kind: 'failed' };

/** Buffers the body up to the limit; past it, stops keeping bytes and drains the rest so the client can read the 413. */
function readBody(req: IncomingMessage): Promise<BodyResult> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) {
    req.resume();
    return Promise.resolve({ kind: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        req.off('data', onData);
        req.resume();
        resolve({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ kind: 'ok', body: Buffer.concat(chunks) }));
    req.once('error', () => resolve({ kind: 'failed' }));
    req.once('aborted', () => resolve({ kind: 'failed' }));
  });
}

/** The path, and whether the query string tries to carry the token (refused: URLs end up in logs and history). */
function splitUrl(raw: string | undefined): { path: string; tokenInQuery: boolean } {
  const url = raw ?? '/';
  const q = url.indexOf('?');
  if (q < 0) return { path: url, tokenInQuery: false };
  const query = new URLSearchParams(url.slice(q + 1));
  const tokenInQuery = [...query.keys()].some((key) => ['token', 'access_token', 'auth'].includes(key.toLowerCase()));
  return { path: url.slice(0, q), tokenInQuery };
}

function formatUrl(host: string, port: number): string {
  return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

/** Only the declared fields go out, so anything extra a source object carries never reaches the page. */
function publicRun(run: DashboardRun): DashboardRun {
  return {
    id: run.id,
    threadId: run.threadId,
    threadName: run.threadName,
    guildId: run.guildId,
    userId: run.userId,
    userName: run.userName,
    mode: run.mode,
    state: run.state,
    position: run.position,
    enqueuedAt: run.enqueuedAt,
    startedAt: run.startedAt,
  };
}

function decodeId(raw: string): string | undefined {
  try {
    const id = decodeURIComponent(raw);
    return id.length > 0 && id.length <= 200 ? id : undefined;
  } catch {
    return undefined;
  }
}

class DashboardServer {
  readonly #now: () => number;
  readonly #tokens: TokenCheck;
  readonly #sessions: SessionStore;
  readonly #throttle: SignInThrottle;
  readonly #routes: Route[];
  readonly #options: DashboardOptions;

  constructor(options: DashboardOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#tokens = new TokenCheck(options.token);
    this.#sessions = new SessionStore(this.#now);
    this.#throttle = new SignInThrottle(this.#now);
    this.#routes = [
      { pattern: /^\/$/, methods: { GET: (ctx) => this.#home(ctx) } },
      { pattern: /^\/login$/, methods: { POST: (ctx) => this.#login(ctx) } },
      { pattern: /^\/logout$/, methods: { POST: (ctx) => this.#logout(ctx) } },
      { pattern: /^\/api\/runs$/, methods: { GET: (ctx) => this.#listRuns(ctx) } },
      { pattern: /^\/api\/runs\/([^/]+)\/abort$/, methods: { POST: (ctx) => this.#abortRun(ctx) } },
    ];
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, tokenInQuery } = splitUrl(req.url);
    if (tokenInQuery) {
      sendJson(res, 400, {
        error: 'tokens in URLs are not accepted; sign in with the form, or send Authorization: Bearer <token>',
      });
      return;
    }
    const route = this.#routes.find((candidate) => candidate.pattern.test(path));
    if (route === undefined) {
      sendJson(res, 404, { error: 'not found' });
      return;
    }
    // HEAD is answered as GET; Node leaves the body out by itself.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const handler = method === 'GET' || method === 'POST' ? route.methods[method] : undefined;
    if (handler === undefined) {
      const allow = Object.keys(route.methods).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
      sendJson(res, 405, { error: 'method not allowed' }, { Allow: allow.join(', ') });
      return;
    }
    const body = await readBody(req);
    if (body.kind === 'failed') return;
    if (body.kind === 'too-large') {
      sendJson(res, 413, { error: `request body over ${BODY_LIMIT_BYTES / 1024} KiB` }, { Connection: 'close' });
      return;
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    const auth = await this.#authenticate(req, address);
    const params = route.pattern.exec(path)!.slice(1);
    await handler({ req, res, address, body: body.body, auth, params });
  }

  async #authenticate(req: IncomingMessage, address: string): Promise<Auth> {
    const bearer = bearerToken(req.headers.authorization);
    if (bearer !== undefined) return this.#checkToken(bearer, address, 'bearer token');
    for (const id of cookieValues(req.headers.cookie, SESSION_COOKIE)) {
      if (this.#sessions.isValid(id)) return { kind: 'session', sessionId: id };
    }
    return { kind: 'none' };
  }

  /** One place for both sign-in paths, so the throttle and the delay apply to bearer guesses as well as form ones. */
  async #checkToken(candidate: string, address: string, via: string): Promise<Auth> {
    const retryAfterMs = this.#throttle.blockedFor(address);
    if (retryAfterMs > 0) return { kind: 'throttled', retryAfterMs };
    if (this.#tokens.matches(candidate)) {
      this.#throttle.succeed(address);
      return { kind: 'bearer' };
    }
    this.#throttle.fail(address);
    this.#options.logger.warn({ address, via }, 'dashboard: failed sign-in (wrong token)');
    await delay(FAILURE_DELAY_MS);
    return { kind: 'wrong' };
  }

  /** Answers for a request that is not signed in; true when it did. */
  #refuseUnauthenticated(ctx: Context): boolean {
    const { auth, res } = ctx;
    if (auth.kind === 'session' || auth.kind === 'bearer') return false;
    if (auth.kind === 'throttled') {
      sendJson(
        res,
        429,
        { error: 'too many failed sign-ins from this address; try again later' },
        { 'Retry-After': String(Math.ceil(auth.retryAfterMs / 1000)) },
      );
    } else {
      const error = auth.kind === 'wrong' ? 'wrong token' : 'sign in first, or send Authorization: Bearer <token>';
      sendJson(res, 401, { error }, { 'WWW-Authenticate': 'Bearer realm="bubble-discord dashboard"' });
    }
    return true;
  }

  /** Cookie sessions must prove the request came from the page itself; bearer clients hold the token and need no such proof. */
  #refuseCrossSite(ctx: Context): boolean {
    if (ctx.auth.kind !== 'session') return false;
    const problem = csrfProblem(ctx.req);
    if (problem === undefined) return false;
    sendJson(ctx.res, 403, { error: problem });
    return true;
  }

  #home(ctx: Context): void {
    if (ctx.auth.kind === 'session' || ctx.auth.kind === 'bearer') sendPage(ctx.res, 200, dashboardPage);
    else sendPage(ctx.res, 200, (nonce) => signInPage(nonce));
  }

  async #login(ctx: Context): Promise<void> {
    const { req, res, address } = ctx;
    if (originProblem(req) !== undefined) {
      sendJson(res, 403, { error: 'cross-origin sign-in refused' });
      return;
    }
    if (mediaType(req) !== 'application/x-www-form-urlencoded') {
      sendJson(res, 415, { error: 'send the sign-in form as application/x-www-form-urlencoded' });
      return;
    }
    const candidate = new URLSearchParams(ctx.body.toString('utf8')).get('token') ?? '';
    const result = await this.#checkToken(candidate, address, 'sign-in form');
    if (result.kind === 'throttled') {
      res.setHeader('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
      sendPage(res, 429, (nonce) => signInPage(nonce, 'too many failed sign-ins, try again later'));
      return;
    }
    if (result.kind !== 'bearer') {
      sendPage(res, 401, (nonce) => signInPage(nonce, 'wrong token'));
      return;
    }
    const sessionId = this.#sessions.create();
    this.#options.logger.info({ address }, 'dashboard: signed in');
    redirect(res, '/', { 'Set-Cookie': sessionCookie(sessionId) });
  }

  #logout(ctx: Context): void {
    if (this.#refuseUnauthenticated(ctx) || this.#refuseCrossSite(ctx)) return;
    if (ctx.auth.kind === 'session') this.#sessions.end(ctx.auth.sessionId);
    sendJson(ctx.res, 200, { signedOut: true }, { 'Set-Cookie': clearedSessionCookie() });
  }

  #listRuns(ctx: Context): void {
    if (this.#refuseUnauthenticated(ctx)) return;
    const runs = this.#options.source.runs().map(publicRun);
    sendJson(ctx.res, 200, { runs, now: this.#now() });
  }

  #abortRun(ctx: Context): void {
    if (this.#refuseUnauthenticated(ctx) || this.#refuseCrossSite(ctx)) return;
    const id = decodeId(ctx.params[0] ?? '');
    if (id === undefined) {
      sendJson(ctx.res, 400, { error: 'bad run id' });
      return;
    }
    const aborted = this.#options.source.abort(id);
    this.#options.logger.info(
      { runId: id, aborted, via: ctx.auth.kind, address: ctx.address },
      'dashboard: abort requested',
    );
    if (aborted) sendJson(ctx.res, 200, { aborted: true });
    else sendJson(ctx.res, 404, { error: 'no such run (it may have finished)' });
  }

  clear(): void {
    this.#sessions.clear();
  }
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** Any failure inside a request ends as a 500 (or a closed socket if headers already went); the process keeps running. */
function answerFailure(res: ServerResponse, logger: Logger, error: unknown): void {
  logger.error({ err: error }, 'dashboard: request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, 500, { error: 'internal error' });
}

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  // An empty token would let anyone in with an empty password field.
  if (options.token.length === 0) throw new Error('the dashboard token is empty; set one in the config');
  const dashboard = new DashboardServer(options);
  const server = createServer((req, res) => {
    dashboard.handle(req, res).catch((error: unknown) => answerFailure(res, options.logger, error));
  });
  // Short limits: the dashboard's requests are tiny, so a slow client is either broken or hostile.
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  await listen(server, options.host, options.port);
  server.on('error', (error) => options.logger.error({ err: error }, 'dashboard: server error'));
  const url = formatUrl(options.host, (server.address() as AddressInfo).port);
  options.logger.info({ url }, 'dashboard listening');
  return {
    url,
    close: () => closeServer(server, dashboard),
  };
}

function closeServer(server: Server, dashboard: DashboardServer): Promise<void> {
  return new Promise((resolve) => {
    dashboard.clear();
    // A browser keeps its polling connection alive; close it so close() does not wait for the keep-alive timeout.
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
