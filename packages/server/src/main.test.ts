import { execFile } from 'node:child_process';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, serveCli as serve } from './testing/cli-process.js';
import { httpCall } from './testing/test-client.js';

const run = promisify(execFile);

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'bubble-cli-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('bubble-server CLI', () => {
  it('principal create-human prints the principal and a bubble_user_ token once, usable by serve', async () => {
    const { stdout } = await run(process.execPath, [
      BIN,
      'principal',
      'create-human',
      'alice',
      '--display-name',
      'Alice',
      '--data',
      dataDir,
    ]);
    const created = JSON.parse(stdout);
    expect(created).toEqual({
      principal: {
        principalId: 'alice',
        kind: 'human',
        displayName: 'Alice',
        ownerPrincipalIds: [],
        createdAt: expect.any(String),
      },
      token: {
        tokenId: expect.stringMatching(/^tok_/),
        token: expect.stringMatching(/^bubble_user_[A-Za-z0-9_-]{43,}$/),
        createdAt: expect.any(String),
      },
    });
    const again = await run(process.execPath, [BIN, 'principal', 'create-human', 'alice', '--data', dataDir]).catch(
      (e) => e,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('principal alice already exists');
    expect(again.stdout).toBe('');

    const server = serve(['--port', '0', '--data', dataDir, '--log-level', 'silent']);
    const url = await server.listening;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.output().stdout).toContain(`data folder: ${dataDir}`);
    const whoami = await httpCall(url, 'GET', '/v1/auth/whoami', { token: created.token.token });
    expect(whoami.body.principal.principalId).toBe('alice');
    // the plaintext is never shown again
    const tokens = await httpCall(url, 'GET', '/v1/principals/alice', { token: created.token.token });
    expect(tokens.text).not.toContain(created.token.token);
    // the operator adds a human while the server runs: the token works at once
    const bob = JSON.parse(
      (await run(process.execPath, [BIN, 'principal', 'create-human', 'bob', '--data', dataDir])).stdout,
    );
    expect((await httpCall(url, 'GET', '/v1/auth/whoami', { token: bob.token.token })).body.principal.principalId).toBe(
      'bob',
    );
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('serve exits 0 on SIGTERM, and the data survives', async () => {
    await run(process.execPath, [BIN, 'principal', 'create-human', 'bob', '--data', dataDir]).then((r) =>
      JSON.parse(r.stdout),
    );
    const first = serve(['--port', '0', '--data', dataDir, '--log-level', 'silent']);
    const url = await first.listening;
    expect((await httpCall(url, 'GET', '/healthz')).status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await expect(httpCall(url, 'GET', '/healthz')).rejects.toThrow();
    const second = serve(['--port', '0', '--data', dataDir, '--log-level', 'silent']);
    await second.listening;
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  });

  it('runs from the repo root with npx', async () => {
    const { stdout } = await run('npx', ['bubble-server', 'principal', 'create-human', 'carol', '--data', dataDir], {
      cwd: REPO_ROOT,
    });
    expect(JSON.parse(stdout).principal.principalId).toBe('carol');
  });

  it('stops when the npx that started it is sent SIGTERM, instead of living on as an orphan', async () => {
    // npx runs the bin through `sh -c`, and that shell does not pass SIGTERM on.
    const server = serve(['--port', '0', '--data', dataDir, '--log-level', 'silent'], ['npx', 'bubble-server']);
    const url = await server.listening;
    expect((await httpCall(url, 'GET', '/healthz')).status).toBe(200);
    server.child.kill('SIGTERM');
    await server.exited;
    let refused = false;
    for (let attempt = 0; attempt < 100 && !refused; attempt += 1) {
      refused = await httpCall(url, 'GET', '/healthz').then(
        () => false,
        () => true,
      );
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(refused).toBe(true);
  });

  it.each([
    [['serve', '--port', 'abc'], 2, '--port must be a number'],
    [['serve', '--database', 'mysql://localhost/bubble'], 2, '--database must be a postgres:// or postgresql:// URL'],
    [['frobnicate'], 2, 'unknown command'],
    [['principal', 'create-human', 'Not Valid'], 2, '<id> must match'],
  ])('refuses %j with exit %i and a clear message', async (args, code, message) => {
    const result = await run(process.execPath, [
      BIN,
      ...args,
      ...(args.includes('--database') ? [] : ['--data', dataDir]),
    ]).catch((e) => e);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
  });

  it('refuses to start with a malformed trusted-proxy list, from the flag or BUBBLE_TRUSTED_PROXIES, and says which entry', async () => {
    const flag = await run(process.execPath, [
      BIN,
      'serve',
      '--data',
      dataDir,
      '--trusted-proxies',
      '127.0.0.1,proxy.lan',
    ]).catch((e) => e);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      'bubble-server: --trusted-proxies: "proxy.lan" is not an IPv4 or IPv6 address or a CIDR range such as 10.0.0.0/8\n',
    );
    const env = await run(process.execPath, [BIN, 'serve', '--data', dataDir], {
      env: { ...process.env, BUBBLE_TRUSTED_PROXIES: '::1,10.0.0.0/' },
    }).catch((e) => e);
    expect(env.code).toBe(2);
    expect(env.stderr).toContain(
      'bubble-server: BUBBLE_TRUSTED_PROXIES: "10.0.0.0/" has no prefix length after the "/" (such as /8 or /64)\n',
    );
  });

  it('keeps its files private whatever the umask: the data folder 0700, bubble.db and its -wal and -shm 0600, an export 0600', async () => {
    // Under umask 022, as a shell outside systemd has it: everything would be world-readable by default.
    const underUmask: [string, ...string[]] = ['sh', '-c', 'umask 022 && exec "$0" "$@"', process.execPath, BIN];
    const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
    const data = join(dataDir, 'fresh', 'data');
    const server = serve(['--port', '0', '--data', data, '--log-level', 'silent'], underUmask);
    try {
      const url = await server.listening;
      const [file, ...head] = underUmask;
      const created = JSON.parse(
        (await run(file, [...head, 'principal', 'create-human', 'alice', '--data', data])).stdout,
      );
      expect((await httpCall(url, 'POST', '/v1/threads', { token: created.token.token, body: {} })).status).toBe(201);
      expect({
        folder: modeOf(data),
        db: modeOf(join(data, 'bubble.db')),
        wal: modeOf(join(data, 'bubble.db-wal')),
        shm: modeOf(join(data, 'bubble.db-shm')),
      }).toEqual({ folder: '700', db: '600', wal: '600', shm: '600' });
      // An export overwriting a world-readable file leaves it 0600.
      const dump = join(dataDir, 'dump.jsonl');
      writeFileSync(dump, 'old\n', { mode: 0o644 });
      expect(modeOf(dump)).toBe('644');
      await run(file, [...head, 'export', '--data', data, '--file', dump]);
      expect(modeOf(dump)).toBe('600');
      expect(readFileSync(dump, 'utf8')).toContain('"alice"');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    // A database made world-readable by an older version is made 0600 when it is opened again.
    chmodSync(join(data, 'bubble.db'), 0o644);
    await run(process.execPath, [BIN, 'principal', 'list', '--data', data]);
    expect(modeOf(join(data, 'bubble.db'))).toBe('600');
  });

  it('reports a port in use and exits 1', async () => {
    const first = serve(['--port', '0', '--data', dataDir, '--log-level', 'silent']);
    const port = new URL(await first.listening).port;
    const result = await run(process.execPath, [BIN, 'serve', '--port', port, '--data', join(dataDir, 'other')]).catch(
      (e) => e,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot listen');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  });
});
