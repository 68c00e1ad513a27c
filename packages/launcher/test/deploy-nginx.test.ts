import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WEB_ROOT } from '../src/launch.js';
import { BUBBLE_CLI, bubble, bubbleWithEnv } from './support/bubble-cli.js';
import { openBrowser, type TestBrowser } from './support/browser.js';
import { freePort, REPO_ROOT, SERVER_BIN, until } from './support/launcher-process.js';

/**
 * The README's "Deploying" recipe, run: a real `bubble-server serve` (the
 * command of deploy/systemd/bubble-server.service) behind Debian's nginx
 * running deploy/nginx/bubble.conf itself, with only its host, ports and
 * certificate paths substituted (a self-signed certificate from openssl).
 * Through nginx: the web UI over https in Chromium (sign in with a token, see a
 * thread, see a message arrive live over wss), the `bubble` CLI over https and
 * wss, and the plain-http redirect. With the unit's `--trusted-proxies`, one
 * client's bad tokens and half-open upgrades lock out that client alone (issue
 * 28 finding 1): each 127.x.y.z source address stands for one client of nginx.
 */
const NGINX = '/usr/sbin/nginx';
const DEPLOY_CONF = join(REPO_ROOT, 'deploy', 'nginx', 'bubble.conf');
const SERVER_UNIT = join(REPO_ROOT, 'deploy', 'systemd', 'bubble-server.service');

let dir: string;
let server: ChildProcess | undefined;
let nginx: ChildProcess | undefined;
let httpsPort: number;
let httpPort: number;
let origin: string;
let token: string;
/** Tokens of people who have not used them yet (a token in use passes even from a locked-out address). */
let fresh: Record<'bob' | 'carol' | 'dave', string>;
const tlsSockets: TLSSocket[] = [];
let threadId: string;
let certPath: string;

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout + result.stderr;
}

async function canListenOnIpv6Loopback(): Promise<boolean> {
  return new Promise((resolveCan) => {
    const probe = createServer();
    probe.once('error', () => resolveCan(false));
    probe.listen(0, '::1', () => probe.close(() => resolveCan(true)));
  });
}

/** One JSON request over https, trusting only the test's certificate. */
function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolveCall, reject) => {
    const req = request(
      `${origin}${path}`,
      {
        method,
        ca: readFileSync(certPath),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolveCall({ status: res.statusCode ?? 0, body: text === '' ? null : JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** `GET /v1/auth/whoami` over https with `bearer`, from the source address `localAddress`: the status. */
function whoamiFrom(localAddress: string, bearer: string): Promise<number> {
  return new Promise((resolveCall, reject) => {
    const req = request(
      `${origin}/v1/auth/whoami`,
      { ca: readFileSync(certPath), localAddress, agent: false, headers: { authorization: `Bearer ${bearer}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolveCall(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * A WebSocket upgrade of /v1/ws over TLS through nginx from `localAddress`, sending nothing after it
 * (`send` writes a client frame later): resolves with the answer's status line once its headers are in.
 */
function upgradeFrom(
  localAddress: string,
): Promise<{ status: string; received: () => string; send: (text: string) => void }> {
  return new Promise((resolveUpgrade, reject) => {
    const tcp = connect({ host: '127.0.0.1', port: httpsPort, localAddress });
    const socket = tlsConnect({ socket: tcp, host: '127.0.0.1', ca: readFileSync(certPath) });
    tlsSockets.push(socket);
    let received = '';
    let answered = false;
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      received += chunk;
      if (!answered && received.includes('\r\n\r\n')) {
        answered = true;
        resolveUpgrade({
          status: received.slice(0, received.indexOf('\r\n')),
          received: () => received,
          // One masked text frame (a zero mask leaves the payload as it is).
          send: (text) => {
            const payload = Buffer.from(text, 'utf8');
            const length =
              payload.length < 126
                ? Buffer.from([0x80 | payload.length])
                : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
            socket.write(Buffer.concat([Buffer.from([0x81]), length, Buffer.alloc(4), payload]));
          },
        });
      }
    });
    socket.once('error', reject);
    socket.once('secureConnect', () =>
      socket.write(
        [
          'GET /v1/ws HTTP/1.1',
          'Host: localhost',
          'Upgrade: websocket',
          'Connection: Upgrade',
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version: 13',
          '',
          '',
        ].join('\r\n'),
      ),
    );
  });
}

function message(runId: string, text: string) {
  return {
    events: [
      { type: 'run_started', data: { runId } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
      { type: 'run_finished', data: { runId, status: 'completed' } },
    ],
  };
}

/** WebSocket upgrades (101 on /v1/ws) in nginx's access log, from a user agent containing `agent` if given. */
function upgradesLogged(agent = ''): number {
  return readFileSync(join(dir, 'nginx', 'logs', 'access.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"GET /v1/ws HTTP/1.1" 101') && line.includes(agent)).length;
}

/** deploy/nginx/bubble.conf with each of `[from, to]` substituted; every `from` must be in the file. */
function substituted(pairs: Array<[string, string]>): string {
  let conf = readFileSync(DEPLOY_CONF, 'utf8');
  for (const [from, to] of pairs) {
    if (!conf.includes(from)) throw new Error(`deploy/nginx/bubble.conf no longer has "${from}": update this test`);
    conf = conf.split(from).join(to);
  }
  return conf;
}

beforeAll(async () => {
  if (!existsSync(NGINX))
    throw new Error(`nginx is not installed (${NGINX}): apt-get install -y nginx (.ci/run installs it when missing)`);
  if (!existsSync(join(DEFAULT_WEB_ROOT, 'index.html')))
    throw new Error(`the web app is not built (${DEFAULT_WEB_ROOT}): npm run build -w @bubble/web`);
  dir = mkdtempSync(join(tmpdir(), 'bubble-deploy-'));
  const data = join(dir, 'data');

  // A self-signed certificate for the test's host, as `openssl` makes one.
  certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);

  // The server, as bubble-server.service runs it (loopback only; the web UI from --web-root; nginx trusted).
  const trustedProxies = /--trusted-proxies (\S+)/.exec(readFileSync(SERVER_UNIT, 'utf8'))?.[1];
  if (trustedProxies === undefined)
    throw new Error('deploy/systemd/bubble-server.service no longer has --trusted-proxies: update this test');
  const port = await freePort();
  server = spawn(
    process.execPath,
    [
      SERVER_BIN,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--data',
      data,
      '--web-root',
      DEFAULT_WEB_ROOT,
      '--trusted-proxies',
      trustedProxies,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let serverOut = '';
  server.stdout!.setEncoding('utf8').on('data', (c: string) => (serverOut += c));
  server.stderr!.setEncoding('utf8').on('data', (c: string) => (serverOut += c));
  await until('the server to listen', () => serverOut.includes(`listening on http://127.0.0.1:${port}`), 20_000);
  const created = JSON.parse(run(process.execPath, [SERVER_BIN, 'principal', 'create-human', 'alice', '--data', data]));
  token = created.token.token;
  const tokenOf = (id: string): string =>
    JSON.parse(run(process.execPath, [SERVER_BIN, 'principal', 'create-human', id, '--data', data])).token.token;
  fresh = { bob: tokenOf('bob'), carol: tokenOf('carol'), dave: tokenOf('dave') };

  // nginx with the documented site, in a main config of the test's own (its pid, logs and temp files in `dir`).
  httpsPort = await freePort();
  httpPort = await freePort();
  origin = `https://127.0.0.1:${httpsPort}`;
  const ipv6 = await canListenOnIpv6Loopback();
  const site = substituted([
    ['server 127.0.0.1:7777;', `server 127.0.0.1:${port};`],
    ['server_name bubble.example.com;', 'server_name localhost;'],
    ['listen 80;', `listen 127.0.0.1:${httpPort};`],
    // A machine without IPv6 drops the [::] lines, as the README says.
    ['listen [::]:80;', ipv6 ? `listen [::1]:${httpPort};` : ''],
    ['listen 443 ssl http2;', `listen 127.0.0.1:${httpsPort} ssl http2;`],
    ['listen [::]:443 ssl http2;', ipv6 ? `listen [::1]:${httpsPort} ssl http2;` : ''],
    ['/etc/letsencrypt/live/bubble.example.com/fullchain.pem', certPath],
    ['/etc/letsencrypt/live/bubble.example.com/privkey.pem', keyPath],
  ]);
  const prefix = join(dir, 'nginx');
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  writeFileSync(join(prefix, 'bubble.conf'), site);
  writeFileSync(
    join(prefix, 'nginx.conf'),
    [
      // Run as root (CI), nginx would drop its workers to "nobody", who cannot read this temp folder.
      process.getuid?.() === 0 ? 'user root;' : '',
      'worker_processes 1;',
      `pid ${join(prefix, 'nginx.pid')};`,
      `error_log ${join(prefix, 'logs', 'error.log')} warn;`,
      // Room for the 257 upgrades of the connection-cap test, each a client and an upstream connection.
      'events { worker_connections 2048; }',
      'http {',
      '  include /etc/nginx/mime.types;',
      `  access_log ${join(prefix, 'logs', 'access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(prefix, t)};`),
      `  include ${join(prefix, 'bubble.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const args = ['-p', prefix, '-c', join(prefix, 'nginx.conf')];
  // `nginx -t`, as the README has you run before a reload.
  expect(run(NGINX, [...args, '-t'])).toContain('test is successful');
  nginx = spawn(NGINX, [...args, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await until(
    'nginx to answer',
    () =>
      api('GET', '/healthz').then(
        (r) => r.status === 200,
        () => false,
      ),
    20_000,
  );

  const thread = await api('POST', '/v1/threads', { title: 'Behind nginx' });
  expect(thread.status).toBe(201);
  threadId = thread.body.thread.threadId;
  expect((await api('POST', `/v1/threads/${threadId}/events`, message('r-first', 'written over https'))).status).toBe(
    201,
  );
}, 60_000);

afterAll(async () => {
  for (const socket of tlsSockets.splice(0)) socket.destroy();
  for (const child of [nginx, server]) {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Bubble behind nginx (deploy/nginx/bubble.conf)', () => {
  it('sends plain http to https', async () => {
    const res = await fetch(`http://127.0.0.1:${httpPort}/threads/x?y=1`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe(`https://127.0.0.1/threads/x?y=1`);
  });

  it('serves the web UI over https: sign in with a token, see the thread, and a message arrive live over wss', async () => {
    let browser: TestBrowser | undefined;
    try {
      browser = await openBrowser('deploy-nginx', { ignoreHTTPSErrors: true });
      const { page, step } = browser;
      await step('open over https', () => page.goto(`${origin}/`));
      await step('token form', () => page.getByLabel('Your token').fill(token));
      await step('sign in', () => page.getByRole('button', { name: 'Continue with token' }).click());
      await step('thread listed', () => page.getByRole('link', { name: 'Behind nginx' }).click());
      await step('its message', () => page.getByText('written over https').waitFor());
      // Appended over https while the page watches: it arrives through the WebSocket, through nginx.
      expect((await api('POST', `/v1/threads/${threadId}/events`, message('r-live', 'arrived live'))).status).toBe(201);
      await step('live message', () => page.getByText('arrived live').waitFor());
      expect(page.url().startsWith(`${origin}/`)).toBe(true);
    } finally {
      await browser?.close();
    }
    // The page's socket went through nginx, upgraded (101): nginx logs it once it closes.
    await until('the upgrade in the access log', () => upgradesLogged('Chrom') > 0, 10_000);
  }, 60_000);

  it('carries the bubble CLI over https and wss, and the CLI says what to do about an untrusted certificate', async () => {
    const untrusted = await bubble(origin, token, 'whoami');
    expect(untrusted.code).toBe(4);
    expect(untrusted.stderr).toContain(
      `bubble: cannot reach the server at ${origin}: its TLS certificate is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT); for a certificate of your own, run with NODE_EXTRA_CA_CERTS=/path/to/its.pem`,
    );

    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      BUBBLE_URL: origin,
      BUBBLE_TOKEN: token,
      NODE_EXTRA_CA_CERTS: certPath,
    };
    const upgradesBefore = upgradesLogged();
    const tail = spawn(process.execPath, [BUBBLE_CLI, 'tail', threadId], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let shown = '';
    let problems = '';
    tail.stdout.setEncoding('utf8').on('data', (c: string) => (shown += c));
    tail.stderr.setEncoding('utf8').on('data', (c: string) => (problems += c));
    try {
      await until('the backlog over wss', () => shown.includes('written over https'), 20_000);
      expect((await api('POST', `/v1/threads/${threadId}/events`, message('r-cli', 'seen by tail'))).status).toBe(201);
      await until('the live event over wss', () => shown.includes('seen by tail'), 20_000);
      expect(problems).toBe('');
    } finally {
      const exited = new Promise((r) => tail.on('exit', r));
      tail.kill('SIGINT');
      expect(await exited).toBe(0);
    }
    await until("the CLI's upgrade in the access log", () => upgradesLogged() > upgradesBefore, 10_000);
  }, 60_000);

  it('locks out only the client that sends bad tokens, not everyone behind nginx', async () => {
    const bad = `bubble_user_${'C'.repeat(43)}`;
    // The default limit: 60 at once, one more a second.
    const statuses: number[] = [];
    while (statuses.length < 150 && statuses.at(-1) !== 429) statuses.push(await whoamiFrom('127.0.0.2', bad));
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(60);
    expect(statuses.slice(0, -1)).toEqual(statuses.slice(0, -1).map(() => 401));
    // That client is refused even a right token it has not used yet...
    expect(await whoamiFrom('127.0.0.2', fresh.carol)).toBe(429);
    // ...while another client of the same nginx signs in, and its own wrong token is a plain 401.
    expect(await whoamiFrom('127.0.0.3', fresh.bob)).toBe(200);
    expect(await whoamiFrom('127.0.0.3', bad)).toBe(401);
  }, 60_000);

  it('caps the upgrades of one client at 256 while another client behind nginx still connects and authenticates', async () => {
    const started = performance.now();
    // 256 upgrades from one client that never authenticate (the server closes them after 10 s).
    const held = await Promise.all(Array.from({ length: 256 }, () => upgradeFrom('127.0.0.4')));
    expect(held.filter((h) => h.status === 'HTTP/1.1 101 Switching Protocols').length).toBe(256);
    const past = await upgradeFrom('127.0.0.4');
    expect(past.status).toBe('HTTP/1.1 429 Too Many Requests');
    await until('the refusal body', () => past.received().includes('127.0.0.4 holds 256 connections'), 5_000);
    const other = await upgradeFrom('127.0.0.5');
    expect(other.status).toBe('HTTP/1.1 101 Switching Protocols');
    other.send(JSON.stringify({ type: 'client.auth', token: fresh.dave }));
    await until('server.ready', () => other.received().includes('"type":"server.ready"'), 10_000);
    // All of it while the 256 were still open (a half-open upgrade lives 10 s).
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await whoamiFrom('127.0.0.5', fresh.dave)).toBe(200);
  }, 60_000);

  it('when the server behind it is down, the CLI says that the proxy cannot reach it (last: it stops the server)', async () => {
    const exited = new Promise((r) => server!.on('exit', r));
    server!.kill('SIGTERM');
    await exited;
    const down = await bubbleWithEnv({ NODE_EXTRA_CA_CERTS: certPath }, origin, token, 'whoami');
    expect(down.code).toBe(4);
    expect(down.stderr).toBe(
      `bubble: cannot reach the server at ${origin}: it answered HTTP 502, not as Bubble: a proxy in front of the server (nginx?) could not reach it. Is bubble-server running behind it?\n`,
    );
  }, 60_000);
});
