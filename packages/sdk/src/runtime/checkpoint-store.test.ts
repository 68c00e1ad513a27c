import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, SqliteCheckpointStore, type CheckpointStore } from './checkpoint-store.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bubble-checkpoints-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const implementations: Array<[string, () => CheckpointStore]> = [
  ['MemoryCheckpointStore', () => new MemoryCheckpointStore()],
  ['SqliteCheckpointStore', () => new SqliteCheckpointStore({ path: join(tempDir(), 'checkpoints.db') })],
];

describe.each(implementations)('%s (the CheckpointStore contract)', (_name, create) => {
  it('answers null for an unknown thread', async () => {
    const store = create();
    expect(await store.get('th_unknown')).toBeNull();
    await store.close();
  });

  it('settles forward only', async () => {
    const store = create();
    await store.settle('th_a', 5);
    expect(await store.get('th_a')).toBe(5);
    await store.settle('th_a', 3);
    expect(await store.get('th_a')).toBe(5);
    await store.settle('th_a', 5);
    expect(await store.get('th_a')).toBe(5);
    await store.settle('th_a', 9);
    expect(await store.get('th_a')).toBe(9);
    await store.close();
  });

  it('keeps threads apart', async () => {
    const store = create();
    await store.settle('th_a', 7);
    await store.settle('th_b', 2);
    expect(await store.get('th_a')).toBe(7);
    expect(await store.get('th_b')).toBe(2);
    await store.close();
  });

  it('settles 0 (nothing handled yet, but the thread is known)', async () => {
    const store = create();
    await store.settle('th_a', 0);
    expect(await store.get('th_a')).toBe(0);
    await store.close();
  });

  it('forgets a deleted thread, which may then start lower', async () => {
    const store = create();
    await store.settle('th_a', 40);
    await store.delete('th_a');
    expect(await store.get('th_a')).toBeNull();
    await store.settle('th_a', 3);
    expect(await store.get('th_a')).toBe(3);
    await store.close();
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses the seq %s', async (seq) => {
    const store = create();
    await expect(store.settle('th_a', seq)).rejects.toThrow(RangeError);
    expect(await store.get('th_a')).toBeNull();
    await store.close();
  });
});

describe('SqliteCheckpointStore durability', () => {
  it('survives closing and reopening the file, and creates missing folders', async () => {
    const path = join(tempDir(), 'nested', 'deeper', 'checkpoints.db');
    const first = new SqliteCheckpointStore({ path });
    await first.settle('th_a', 12);
    await first.close();
    const second = new SqliteCheckpointStore({ path });
    expect(await second.get('th_a')).toBe(12);
    await second.close();
  });

  it('keeps scopes apart in one file', async () => {
    const path = join(tempDir(), 'checkpoints.db');
    const botA = new SqliteCheckpointStore({ path, scope: 'bot-a' });
    const botB = new SqliteCheckpointStore({ path, scope: 'bot-b' });
    await botA.settle('th_shared', 10);
    await botB.settle('th_shared', 4);
    expect(await botA.get('th_shared')).toBe(10);
    expect(await botB.get('th_shared')).toBe(4);
    await botA.close();
    await botB.close();
  });

  it('a lost file answers null (the runtime then falls back to onFirstJoin)', async () => {
    const dir = tempDir();
    const path = join(dir, 'checkpoints.db');
    const first = new SqliteCheckpointStore({ path });
    await first.settle('th_a', 12);
    await first.close();
    rmSync(dir, { recursive: true, force: true });
    const second = new SqliteCheckpointStore({ path });
    expect(await second.get('th_a')).toBeNull();
    await second.close();
  });

  it('every settle that returned survives a kill -9 of the process', async () => {
    const path = join(tempDir(), 'checkpoints.db');
    const modulePath = fileURLToPath(new URL('../../dist/runtime/checkpoint-store.js', import.meta.url));
    const script = `
      const { SqliteCheckpointStore } = await import(${JSON.stringify(modulePath)});
      const store = new SqliteCheckpointStore({ path: ${JSON.stringify(path)} });
      for (let seq = 1; ; seq += 1) {
        await store.settle('th_crash', seq);
        process.stdout.write(seq + '\\n');
      }
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let lastAcknowledged = 0;
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => resolve());
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        lastAcknowledged = Number(line);
        if (lastAcknowledged >= 200) child.kill('SIGKILL');
      });
    });
    expect(child.signalCode).toBe('SIGKILL');
    const store = new SqliteCheckpointStore({ path });
    const recovered = await store.get('th_crash');
    await store.close();
    expect(recovered).not.toBeNull();
    expect(recovered as number).toBeGreaterThanOrEqual(lastAcknowledged);
  });
});
