import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../test/support/test-postgres.js';
import { runCli, serveCli, type ServeProcess } from '../testing/cli-process.js';
import { httpCall } from '../testing/test-client.js';
import { redactedUrl } from './database-commands.js';

let dir: string;
let db: TestDatabase;
const running: ServeProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-dbcli-'));
  db = await freshDatabase('cli');
});
afterEach(async () => {
  for (const server of running.splice(0)) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

const cli = async (...args: string[]) => JSON.parse((await runCli(args)).stdout);
const serve = (...args: string[]): ServeProcess => {
  const server = serveCli(['--port', '0', '--log-level', 'silent', ...args]);
  running.push(server);
  return server;
};

/** SQL on the server's `postgres` database (the test's own may be refusing connections). */
async function admin(sql: string): Promise<void> {
  const url = new URL(db.url);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('bubble-server on PostgreSQL (--database)', () => {
  it('migrates a database, or a data folder, and says what it applied', async () => {
    // Version 2 is presence (cluster_instances, presence); PostgreSQL's 4 and SQLite's 5 are invitations (Consent).
    expect(await cli('migrate', '--database', db.url)).toEqual({ applied: [1, 2, 3, 4], version: 4 });
    expect(await cli('migrate', '--database', db.url)).toEqual({ applied: [], version: 4 });
    expect(await cli('migrate', '--data', dir)).toEqual({ applied: [1, 2, 3, 4, 5], version: 5 });
    expect(await cli('migrate', '--data', dir)).toEqual({ applied: [], version: 5 });
    const missing = new URL(db.url);
    missing.pathname = '/bubble_no_such_database';
    const refused = await runCli(['migrate', '--database', missing.toString()]).catch((e) => e);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('database "bubble_no_such_database" does not exist');
  });

  it('runs the principal commands on the database, and serve answers with what they made', async () => {
    const created = await cli('principal', 'create-human', 'alice', '--display-name', 'Alice', '--database', db.url);
    expect(created.principal).toMatchObject({ principalId: 'alice', displayName: 'Alice' });
    const minted = await cli('principal', 'mint-token', 'alice', '--database', db.url);
    expect(
      (await cli('principal', 'list', '--database', db.url)).map((p: { principalId: string }) => p.principalId),
    ).toEqual(['alice']);
    const taken = await runCli(['principal', 'create-human', 'alice', '--database', db.url]).catch((e) => e);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('principal alice already exists');

    const server = serve('--database', db.url, '--pg-pool-size', '4', '--pg-statement-timeout-ms', '5000');
    const url = await server.listening;
    expect(server.output().stdout).toContain(`database: ${redactedUrl(db.url)}`);
    for (const token of [created.token.token, minted.token.token]) {
      expect((await httpCall(url, 'GET', '/v1/auth/whoami', { token })).body.principal.principalId).toBe('alice');
    }
    // Revoked by the operator while the server runs: the server learns of it from the database.
    const revoked = await cli('principal', 'revoke-tokens', 'alice', '--database', db.url);
    expect(revoked.revokedTokenIds.sort()).toEqual([created.token.tokenId, minted.token.tokenId].sort());
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i += 1) {
      status = (await httpCall(url, 'GET', '/v1/auth/whoami', { token: minted.token.token })).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
  });

  it('answers 503 while the database refuses connections, stays up, and serves again once it is back', async () => {
    const created = await cli('principal', 'create-human', 'alice', '--database', db.url);
    const server = serve('--database', db.url);
    const url = await server.listening;
    const token = created.token.token;
    const thread = await httpCall(url, 'POST', '/v1/threads', { token, body: { title: 't' } });
    expect(thread.status).toBe(201);
    const threadId = thread.body.thread.threadId as string;
    const name = new URL(db.url).pathname.slice(1);
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    try {
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
      const read = await httpCall(url, 'GET', `/v1/threads/${threadId}/events`, { token });
      const write = await httpCall(url, 'POST', `/v1/threads/${threadId}/events`, {
        token,
        body: { type: 'acme.note', data: { text: 'during' } },
      });
      const health = await httpCall(url, 'GET', '/healthz');
      for (const answer of [read, write, health]) {
        expect(answer.status).toBe(503);
        expect(answer.headers['retry-after']).toBe('1');
      }
      expect(read.body.error.code).toBe('internal');
    } finally {
      await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    }
    const after = await httpCall(url, 'POST', `/v1/threads/${threadId}/events`, {
      token,
      body: { type: 'acme.note', data: { text: 'after' } },
    });
    expect(after.status).toBe(201);
    expect(after.body.events[0].seq).toBe(2);
    expect((await httpCall(url, 'GET', '/healthz')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });

  it('refuses pool flags without --database, listing every problem', async () => {
    const refused = await runCli([
      'serve',
      '--data',
      dir,
      '--pg-pool-size',
      '1',
      '--pg-statement-timeout-ms',
      'soon',
    ]).catch((e) => e);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--pg-pool-size must be at least 2');
    expect(refused.stderr).toContain('--pg-statement-timeout-ms must be a number');
  });
});
