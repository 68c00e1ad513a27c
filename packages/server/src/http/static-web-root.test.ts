import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCli } from '../cli/parse-cli.js';
import { createBubbleServer, type BubbleServer } from '../create-bubble-server.js';

const INDEX = '<!doctype html><title>bubble</title><script type="module" src="/assets/app-1a2b3c.js"></script>';
const APP_JS = 'console.log("app")';

let dir: string;
let server: BubbleServer;

/** A raw request: the path is sent exactly as given (fetch would normalise `..`). */
function get(
  path: string,
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolveAnswer, reject) => {
    const req = request(`${server.url}${path}`, { method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-web-root-'));
  const web = join(dir, 'web');
  await mkdir(join(web, 'assets'), { recursive: true });
  await writeFile(join(web, 'index.html'), INDEX);
  await writeFile(join(web, 'assets', 'app-1a2b3c.js'), APP_JS);
  await writeFile(join(web, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(dir, 'secret.txt'), 'outside the web root');
  server = await createBubbleServer({ dataDir: join(dir, 'data'), port: 0, webRoot: web });
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('static web root', () => {
  it('serves index.html at / with no-cache', async () => {
    const r = await get('/');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.body).toBe(INDEX);
  });

  it('serves hashed assets as immutable with their content type', async () => {
    const r = await get('/assets/app-1a2b3c.js');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.body).toBe(APP_JS);
    const svg = await get('/favicon.svg');
    expect([svg.status, svg.headers['content-type'], svg.headers['cache-control']]).toEqual([
      200,
      'image/svg+xml',
      'no-cache',
    ]);
  });

  it('falls back to index.html for app routes, also with a query string', async () => {
    for (const path of ['/threads/th_abc', '/bots', '/threads/th_abc.sub-a8f3k-2q9?x=1']) {
      const r = await get(path);
      expect([path, r.status, r.body]).toEqual([path, 200, INDEX]);
    }
  });

  it('answers HEAD without a body', async () => {
    const r = await get('/assets/app-1a2b3c.js', 'HEAD');
    expect([r.status, r.headers['content-length'], r.body]).toEqual([200, String(APP_JS.length), '']);
  });

  it('answers a missing file with an extension with the protocol 404, not index.html', async () => {
    const r = await get('/assets/missing-000.js');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error.code).toBe('not_found');
  });

  it('never shadows the API', async () => {
    expect((await get('/healthz')).body).toBe('{"ok":true}');
    const info = await get('/v1/info');
    expect(JSON.parse(info.body).name).toBe('bubble');
    const unknown = await get('/v1/no-such-route');
    expect([unknown.status, JSON.parse(unknown.body).error.code]).toEqual([404, 'not_found']);
    const bare = await get('/v1');
    expect([bare.status, JSON.parse(bare.body).error.code]).toEqual([404, 'not_found']);
    const unauth = await get('/v1/threads');
    expect(unauth.status).toBe(401);
  });

  it('does not serve files outside the root', async () => {
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/../../secret.txt']) {
      const r = await get(path);
      expect([path, r.body.includes('outside the web root')]).toEqual([path, false]);
    }
  });

  it('leaves other methods to the API router', async () => {
    const r = await get('/', 'POST');
    expect([r.status, JSON.parse(r.body).error.code]).toEqual([404, 'not_found']);
  });

  it('is off without webRoot, and --web-root belongs to serve', async () => {
    const bare = await createBubbleServer({ dataDir: join(dir, 'data2'), port: 0 });
    try {
      const r = await fetch(`${bare.url}/`);
      expect(r.status).toBe(404);
    } finally {
      await bare.close();
    }
    const parsed = parseCli(['serve', '--web-root', './web']);
    expect(parsed.ok && parsed.value.command === 'serve' && parsed.value.webRoot).toBe('./web');
    expect(parseCli(['principal', 'create-human', 'alice', '--web-root', 'x'])).toEqual({
      ok: false,
      errors: ['--web-root belongs to "serve"'],
    });
  });
});
