import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT, SERVER_BIN, until } from './support/launcher-process.js';

/**
 * The README's backup recipe: deploy/backup-sqlite.mjs copies a running
 * server's database while events are being appended, and a server started on
 * the copy has every event up to some seq, with no gap, and the same tokens.
 */
const BACKUP = join(REPO_ROOT, 'deploy', 'backup-sqlite.mjs');
let dir: string;
const servers: ChildProcess[] = [];

async function serve(data: string): Promise<string> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [SERVER_BIN, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data', data],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  servers.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  await until('the server to listen', () => out.includes('listening on'), 20_000);
  return `http://127.0.0.1:${port}`;
}

function backup(from: string, to: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveRun) => {
    const child = spawn(process.execPath, [BACKUP, from, to], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-backup-'));
});

afterAll(async () => {
  for (const child of servers) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('deploy/backup-sqlite.mjs', () => {
  it('backs up a running server while it writes; a server on the copy has a gapless prefix and the same tokens', async () => {
    const data = join(dir, 'live');
    const url = await serve(data);
    const made = spawnSync(process.execPath, [SERVER_BIN, 'principal', 'create-human', 'alice', '--data', data], {
      encoding: 'utf8',
    });
    const token = JSON.parse(made.stdout).token.token as string;
    const alice = new BubbleClient({ url, token });
    const { thread } = await alice.createThread({ title: 'kept' });
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await alice.appendEvent(thread.threadId, { type: 'acme.note', data: { n: written } });
        written += 1;
      }
    })();
    await until('some writes', () => written >= 50);
    const copy = join(dir, 'backups', 'bubble-1.db');
    mkdirSync(join(dir, 'backups'));
    const result = await backup(join(data, 'bubble.db'), copy);
    await until('more writes after the backup', () => written >= 100 + 50);
    writing = false;
    await writer;
    alice.close();
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^backed up .*bubble\.db to .*bubble-1\.db \(\d+ pages, integrity ok\)\n$/);
    expect(statSync(copy).mode & 0o777).toBe(0o600);

    // Restoring: the copy becomes the bubble.db of a data folder.
    const restored = join(dir, 'restored');
    mkdirSync(restored);
    copyFileSync(copy, join(restored, 'bubble.db'));
    const restoredUrl = await serve(restored);
    const again = new BubbleClient({ url: restoredUrl, token });
    try {
      expect((await again.whoami()).principalId).toBe('alice');
      const events = (await again.readEvents(thread.threadId, { after: 0, limit: 1000 })).events;
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const notes = events.filter((e) => e.type === 'acme.note').map((e) => e.data.n);
      expect(notes).toEqual(notes.map((_, i) => i));
      expect(notes.length).toBeGreaterThanOrEqual(50);
      expect(notes.length).toBeLessThan(written);
    } finally {
      again.close();
    }

    const twice = await backup(join(data, 'bubble.db'), copy);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('exists already; choose a new name');
  }, 60_000);
});
