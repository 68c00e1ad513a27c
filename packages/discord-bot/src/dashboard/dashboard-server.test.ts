import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_TTL_MS } from './auth.js';
import { startDashboard, type Dashboard, type DashboardRun, type DashboardSource } from './dashboard-server.js';

const TOKEN = 'correct-horse-battery-staple-0123456789';
const HOSTILE = '<img src=x onerror=alert(1)>';

/** An in-memory source: abort removes the run, like the bot's queue does. */
class FakeSource implements DashboardSource {
  readonly aborted: string[] = [];
  failNext = false;

  constructor(public list: DashboardRun[]) {}

  runs(): DashboardRun[] {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('queue exploded');
    }
    return this.list;
  }

  abort(id: string): boolean {
    this.aborted.push(id);
    const before = this.list.length;
    this.list = this.list.filter((run) => run.id !== id);
    return this.list.length < before;
  }
}

function run(overrides: Partial<DashboardRun>): DashboardRun {
  return {
    id: 'run-1',
    threadId: '1100000000000000001',
    threadName: 'a thread',
    guildId: '1000000000000000001',
    userId: '1200000000000000001',
    userName: 'alice',
    mode: 'agentic',
    state: 'running',
    position: undefined,
    enqueuedAt: 1_700_000_000_000,
    startedAt: 1_700_000_001_000,
    ...overrides,
  };
}

/** Collects the pino lines so a test can read what was logged (and that the token never was). */
function capturingLogger(): { logger: pino.Logger; lines: () => Array<Record<string, unknown>>; raw: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return {
    logger: pino({ level: 'debug' }, stream),
    raw: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: () => Record<string, unknown>;
}

/** Raw node:http so tests control every header (fetch would add Origin, Sec-Fetch-* or refuse some). */
function call(
  url: string,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    chunked?: boolean;
  },
): Promise<Reply> {
  const target = new URL(options.path, url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as Record<string, unknown>,
          });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) {
      if (!options.chunked) req.setHeader('Content-Length', String(Buffer.byteLength(options.body)));
      req.write(options.body);
    }
    req.end();
  });
}

const form = (token: string): { method: string; path: string; headers: Record<string, string>; body: string } => ({
  method: 'POST',
  path: '/login',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ token }).toString(),
});

async function signIn(url: string): Promise<string> {
  const reply = await call(url, form(TOKEN));
  expect(reply.status).toBe(303);
  const cookie = reply.headers['set-cookie']?.[0] ?? '';
  return cookie.split(';')[0]!;
}

describe('dashboard server', () => {
  let dashboard: Dashboard | undefined;
  let source: FakeSource;
  let log: ReturnType<typeof capturingLogger>;
  let clock: number;

  async function start(
    runs: DashboardRun[] = [
      run({}),
      run({ id: 'run-2', state: 'queued', position: 1, startedAt: undefined, userName: 'bob' }),
    ],
  ): Promise<string> {
    source = new FakeSource(runs);
    log = capturingLogger();
    clock = 1_700_000_060_000;
    dashboard = await startDashboard({
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      source,
      logger: log.logger,
      now: () => clock,
    });
    return dashboard.url;
  }

  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
    // Whatever a test did, the token must never reach the log.
    expect(log.raw()).not.toContain(TOKEN);
  });

  it('listens on an ephemeral loopback port and logs its URL at info', async () => {
    const url = await start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(log.lines()).toContainEqual(expect.objectContaining({ level: 30, url, msg: 'dashboard listening' }));
  });

  it('refuses to start with an empty token', async () => {
    log = capturingLogger();
    await expect(
      startDashboard({ host: '127.0.0.1', port: 0, token: '', source: new FakeSource([]), logger: log.logger }),
    ).rejects.toThrow(/token is empty/);
  });

  it('answers the API with 401 when not signed in, and shows the sign-in form on /', async () => {
    const url = await start();
    const api = await call(url, { path: '/api/runs' });
    expect(api.status).toBe(401);
    expect(api.json()).toEqual({ error: 'sign in first, or send Authorization: Bearer <token>' });
    const home = await call(url, { path: '/' });
    expect(home.status).toBe(200);
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.text).toContain('<form class="card" method="post" action="/login">');
    expect(home.text).toContain('type="password"');
    expect(home.text).not.toContain('<script');
  });

  it('does not accept the token in the URL', async () => {
    const url = await start();
    for (const path of [`/api/runs?token=${TOKEN}`, `/?token=${TOKEN}`, `/api/runs?TOKEN=${TOKEN}`]) {
      const reply = await call(url, { path });
      expect(reply.status, path).toBe(400);
      expect(reply.json().error).toMatch(/tokens in URLs are not accepted/);
      expect(reply.headers['set-cookie']).toBeUndefined();
    }
    expect(source.aborted).toEqual([]);
  });

  it('serves the runs to a bearer client, with the server clock', async () => {
    const url = await start();
    const reply = await call(url, { path: '/api/runs', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(reply.status).toBe(200);
    const body = reply.json() as { runs: DashboardRun[]; now: number };
    expect(body.now).toBe(clock);
    expect(body.runs.map((r) => [r.id, r.state, r.position])).toEqual([
      ['run-1', 'running', undefined],
      ['run-2', 'queued', 1],
    ]);
  });

  it('sends only the declared run fields', async () => {
    const url = await start([{ ...run({}), secretThing: 'internal' } as DashboardRun]);
    const reply = await call(url, { path: '/api/runs', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(reply.text).not.toContain('secretThing');
  });

  it('answers a wrong bearer token with 401 after a delay, and logs the address at warn', async () => {
    const url = await start();
    const began = Date.now();
    const reply = await call(url, { path: '/api/runs', headers: { Authorization: 'Bearer nope' } });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ error: 'wrong token' });
    expect(Date.now() - began).toBeGreaterThanOrEqual(300);
    expect(log.lines()).toContainEqual(
      expect.objectContaining({ level: 40, address: '127.0.0.1', msg: 'dashboard: failed sign-in (wrong token)' }),
    );
  });

  it('answers a wrong sign-in with a 401 page saying "wrong token" and no cookie', async () => {
    const url = await start();
    const reply = await call(url, form('not-the-token'));
    expect(reply.status).toBe(401);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.text).toContain('wrong token');
    expect(reply.headers['set-cookie']).toBeUndefined();
    expect(log.lines()).toContainEqual(expect.objectContaining({ level: 40, address: '127.0.0.1' }));
  });

  it('signs in with the form: a HttpOnly, SameSite=Strict, Path=/ session cookie and a redirect to /', async () => {
    const url = await start();
    const reply = await call(url, form(TOKEN));
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toBe('/');
    const cookie = reply.headers['set-cookie']?.[0] ?? '';
    expect(cookie).toMatch(/^bubble_dashboard_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain(TOKEN);

    const session = cookie.split(';')[0]!;
    const home = await call(url, { path: '/', headers: { Cookie: session } });
    expect(home.text).toContain('bubble-discord dashboard');
    expect(home.text).toContain('<script nonce=');
    const api = await call(url, { path: '/api/runs', headers: { Cookie: `other=1; ${session}` } });
    expect(api.status).toBe(200);
  });

  it('refuses a forged or expired session cookie', async () => {
    const url = await start();
    const forged = await call(url, { path: '/api/runs', headers: { Cookie: 'bubble_dashboard_session=AAAA' } });
    expect(forged.status).toBe(401);
    const session = await signIn(url);
    clock += SESSION_TTL_MS + 1;
    const expired = await call(url, { path: '/api/runs', headers: { Cookie: session } });
    expect(expired.status).toBe(401);
  });

  it('refuses a cookie abort without the CSRF header, and from another origin', async () => {
    const url = await start();
    const session = await signIn(url);
    const bare = await call(url, { method: 'POST', path: '/api/runs/run-1/abort', headers: { Cookie: session } });
    expect(bare.status).toBe(403);
    expect(bare.json().error).toMatch(/X-Bubble-Dashboard/);
    const formLike = await call(url, {
      method: 'POST',
      path: '/api/runs/run-1/abort',
      headers: { Cookie: session, 'Content-Type': 'text/plain' },
      body: '{}',
    });
    expect(formLike.status).toBe(403);
    const foreign = await call(url, {
      method: 'POST',
      path: '/api/runs/run-1/abort',
      headers: { Cookie: session, 'X-Bubble-Dashboard': '1', Origin: 'http://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.json().error).toBe('cross-origin request refused');
    const crossSite = await call(url, {
      method: 'POST',
      path: '/api/runs/run-1/abort',
      headers: { Cookie: session, 'X-Bubble-Dashboard': '1', 'Sec-Fetch-Site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    const nullOrigin = await call(url, {
      method: 'POST',
      path: '/api/runs/run-1/abort',
      headers: { Cookie: session, 'X-Bubble-Dashboard': '1', Origin: 'null' },
    });
    expect(nullOrigin.status).toBe(403);
    expect(source.aborted).toEqual([]);
  });

  it('aborts through a cookie session with the CSRF header (or JSON), and through a bearer token without one', async () => {
    const url = await start([run({ id: 'a' }), run({ id: 'b' }), run({ id: 'c' })]);
    const session = await signIn(url);
    const host = new URL(url).host;
    const viaHeader = await call(url, {
      method: 'POST',
      path: '/api/runs/a/abort',
      headers: { Cookie: session, 'X-Bubble-Dashboard': '1', Origin: `http://${host}` },
    });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.json()).toEqual({ aborted: true });
    const viaJson = await call(url, {
      method: 'POST',
      path: '/api/runs/b/abort',
      headers: { Cookie: session, 'Content-Type': 'application/json; charset=utf-8' },
      body: '{}',
    });
    expect(viaJson.status).toBe(200);
    const viaBearer = await call(url, {
      method: 'POST',
      path: '/api/runs/c/abort',
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(viaBearer.status).toBe(200);
    expect(source.aborted).toEqual(['a', 'b', 'c']);
    expect(log.lines()).toContainEqual(expect.objectContaining({ runId: 'a', aborted: true, via: 'session' }));
  });

  it('answers 404 for an unknown run id, and 400 for an undecodable one', async () => {
    const url = await start();
    const unknown = await call(url, {
      method: 'POST',
      path: '/api/runs/gone/abort',
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual({ error: 'no such run (it may have finished)' });
    expect(source.aborted).toEqual(['gone']);
    const encoded = await call(url, {
      method: 'POST',
      path: '/api/runs/run%2F1/abort',
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(encoded.status).toBe(404);
    expect(source.aborted).toEqual(['gone', 'run/1']);
    const broken = await call(url, {
      method: 'POST',
      path: '/api/runs/%E0%A4%A/abort',
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(broken.status).toBe(400);
  });

  it('answers unknown routes with 404 JSON and wrong methods with 405 and Allow', async () => {
    const url = await start();
    const missing = await call(url, { path: '/admin', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(missing.json()).toEqual({ error: 'not found' });
    const wrong = [
      { method: 'DELETE', path: '/api/runs', allow: 'GET, HEAD' },
      { method: 'GET', path: '/api/runs/run-1/abort', allow: 'POST' },
      { method: 'POST', path: '/', allow: 'GET, HEAD' },
      { method: 'GET', path: '/login', allow: 'POST' },
    ];
    for (const { method, path, allow } of wrong) {
      const reply = await call(url, { method, path, headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(reply.status, `${method} ${path}`).toBe(405);
      expect(reply.headers.allow).toBe(allow);
      expect(reply.json()).toEqual({ error: 'method not allowed' });
    }
    const head = await call(url, { method: 'HEAD', path: '/' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('answers bodies over 16 KiB with 413, declared or streamed', async () => {
    const url = await start();
    const big = `token=${'x'.repeat(17 * 1024)}`;
    const declared = await call(url, { ...form('x'), body: big });
    expect(declared.status).toBe(413);
    expect(declared.json()).toEqual({ error: 'request body over 16 KiB' });
    const streamed = await call(url, { ...form('x'), body: big, chunked: true });
    expect(streamed.status).toBe(413);
    const fits = await call(url, { ...form('x'.repeat(15 * 1024)) });
    expect(fits.status).toBe(401);
    expect(source.aborted).toEqual([]);
  });

  it('refuses a sign-in that is not a form, or comes from another origin', async () => {
    const url = await start();
    const json = await call(url, {
      method: 'POST',
      path: '/login',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: TOKEN }),
    });
    expect(json.status).toBe(415);
    const foreign = await call(url, {
      ...form(TOKEN),
      headers: { ...form(TOKEN).headers, Origin: 'http://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers['set-cookie']).toBeUndefined();
    const sandboxed = await call(url, { ...form(TOKEN), headers: { ...form(TOKEN).headers, Origin: 'null' } });
    expect(sandboxed.status).toBe(403);
  });

  it('accepts the sign-in form as Chromium sends it under no-referrer (Origin: null, Sec-Fetch-Site: same-origin)', async () => {
    const url = await start();
    const reply = await call(url, {
      ...form(TOKEN),
      headers: { ...form(TOKEN).headers, Origin: 'null', 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(reply.status).toBe(303);
  });

  it('locks an address out after ten wrong tokens, even for the right one', async () => {
    const url = await start();
    // In parallel: the lockout exists precisely because a delay alone does not stop parallel guesses.
    const guesses = await Promise.all(Array.from({ length: 10 }, (_, i) => call(url, form(`guess-${i}`))));
    expect(guesses.map((g) => g.status)).toEqual(Array(10).fill(401));
    const right = await call(url, form(TOKEN));
    expect(right.status).toBe(429);
    expect(right.text).toContain('too many failed sign-ins');
    expect(right.headers['retry-after']).toMatch(/^\d+$/);
    expect(right.headers['set-cookie']).toBeUndefined();
    const bearer = await call(url, { path: '/api/runs', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(429);
    clock += 10 * 60 * 1000;
    expect((await call(url, form(TOKEN))).status).toBe(303);
  });

  it('signs out: the cookie is cleared and the session no longer works', async () => {
    const url = await start();
    const session = await signIn(url);
    const refused = await call(url, { method: 'POST', path: '/logout', headers: { Cookie: session } });
    expect(refused.status).toBe(403);
    const out = await call(url, {
      method: 'POST',
      path: '/logout',
      headers: { Cookie: session, 'X-Bubble-Dashboard': '1' },
    });
    expect(out.status).toBe(200);
    expect(out.headers['set-cookie']?.[0]).toMatch(/^bubble_dashboard_session=; .*Max-Age=0/);
    expect((await call(url, { path: '/api/runs', headers: { Cookie: session } })).status).toBe(401);
  });

  it('puts the security headers on pages, JSON and errors; the CSP allows only the nonce-carrying script', async () => {
    const url = await start();
    const session = await signIn(url);
    const replies = await Promise.all([
      call(url, { path: '/' }),
      call(url, { path: '/', headers: { Cookie: session } }),
      call(url, { path: '/api/runs', headers: { Cookie: session } }),
      call(url, { path: '/nope' }),
      call(url, { path: '/api/runs' }),
    ]);
    for (const reply of replies) {
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['x-frame-options']).toBe('DENY');
      expect(reply.headers['cache-control']).toBe('no-store');
      const csp = reply.headers['content-security-policy'] ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
    }
    const page = replies[1]!;
    const nonce = /<script nonce="([^"]+)">/.exec(page.text)?.[1];
    expect(nonce).toBeDefined();
    expect(page.headers['content-security-policy']).toContain(`script-src 'nonce-${nonce}'`);
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    // A fresh nonce per answer, so one seen once is of no use later.
    const again = await call(url, { path: '/', headers: { Cookie: session } });
    expect(again.text).not.toContain(nonce!);
  });

  it('returns a hostile thread name as plain data (the page renders it as text)', async () => {
    const url = await start([run({ threadName: HOSTILE, userName: '"><script>alert(2)</script>' })]);
    const reply = await call(url, { path: '/api/runs', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = reply.json() as { runs: DashboardRun[] };
    expect(body.runs[0]!.threadName).toBe(HOSTILE);
    expect(body.runs[0]!.userName).toBe('"><script>alert(2)</script>');
    // The server-rendered page never carries run data at all.
    const session = await signIn(url);
    const page = await call(url, { path: '/', headers: { Cookie: session } });
    expect(page.text).not.toContain('onerror');
  });

  it('answers 500 when the source throws, and keeps serving', async () => {
    const url = await start();
    source.failNext = true;
    const failed = await call(url, { path: '/api/runs', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(failed.status).toBe(500);
    expect(failed.json()).toEqual({ error: 'internal error' });
    expect(log.lines()).toContainEqual(expect.objectContaining({ level: 50, msg: 'dashboard: request failed' }));
    const next = await call(url, { path: '/api/runs', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(next.status).toBe(200);
  });

  it('ignores a malformed cookie header and an odd Authorization scheme', async () => {
    const url = await start();
    const odd = await call(url, {
      path: '/api/runs',
      headers: {
        Cookie: ';;=;bubble_dashboard_session',
        Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`,
      },
    });
    expect(odd.status).toBe(401);
  });

  it('closes promptly even with a keep-alive connection open', async () => {
    const url = await start();
    const reply = await fetch(`${url}/api/runs`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(reply.status).toBe(200);
    await reply.text();
    const began = Date.now();
    await dashboard!.close();
    dashboard = undefined;
    expect(Date.now() - began).toBeLessThan(1000);
  });
});
