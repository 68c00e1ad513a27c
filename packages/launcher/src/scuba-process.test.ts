import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { restartDelay, superviseScuba } from './scuba-process.js';

/** A stand-in for the claude-scuba binary: records each start, then behaves as the script says. */
const FAKE = `
import { appendFileSync, readFileSync } from 'node:fs';
const [, , , configPath] = process.argv;
const config = JSON.parse(readFileSync(configPath, 'utf8'));
process.on('SIGTERM', () => { appendFileSync(config.starts, 'stopped\\n'); process.exit(0); });
appendFileSync(config.starts, process.pid + '\\n');
const n = readFileSync(config.starts, 'utf8').trim().split('\\n').length;
console.log('started ' + n + ' ' + process.env.MARK);
if (n <= config.crashes) process.exit(config.code);
setInterval(() => {}, 1000);
`;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function setup(crashes: number, code: number) {
  dir = mkdtempSync(join(tmpdir(), 'scuba-supervisor-'));
  const bin = join(dir, 'fake-scuba.mjs');
  writeFileSync(bin, FAKE);
  const starts = join(dir, 'starts.txt');
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ starts, crashes, code }));
  const logPath = join(dir, 'logs', 'scuba.log');
  /** What every supervisor of these tests is given. */
  const base = { bin, configPath, logPath, logger: pino({ level: 'silent' }) };
  return { base, starts, logPath, missingDir: join(dir, 'no-such-dir') };
}

async function until(what: string, predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const lines = (path: string) => {
  try {
    return readFileSync(path, 'utf8').trim().split('\n');
  } catch {
    return [];
  }
};

describe('superviseScuba', () => {
  it('restarts a child that dies, logs its output to the file, and stops it with SIGTERM', async () => {
    const f = setup(2, 1);
    const supervisor = superviseScuba({
      ...f.base,
      env: { PATH: process.env.PATH, MARK: 'env-passed' },
      restartBaseMs: 10,
    });
    await until('the third start', () => lines(f.starts).length === 3);
    await until('a running child', () => supervisor.pid !== undefined && lines(f.starts)[2] === String(supervisor.pid));
    await until('its output', () => lines(f.logPath).length === 3);
    await supervisor.stop();
    expect(lines(f.starts).at(-1)).toBe('stopped');
    expect(lines(f.logPath)).toEqual(['started 1 env-passed', 'started 2 env-passed', 'started 3 env-passed']);
    expect(supervisor.pid).toBeUndefined();
  });

  it('does not restart a child that refused its config (exit 2)', async () => {
    const f = setup(1, 2);
    const supervisor = superviseScuba({
      ...f.base,
      env: { PATH: process.env.PATH },
      restartBaseMs: 10,
    });
    await until('the first start', () => lines(f.starts).length === 1);
    await until('the exit', () => supervisor.pid === undefined);
    await new Promise((r) => setTimeout(r, 200));
    expect(lines(f.starts)).toHaveLength(1);
    await supervisor.stop();
  });

  it('gives up after too many quick failures in a row, and says so in plain sentences', async () => {
    const f = setup(100, 1);
    const notices: string[] = [];
    const supervisor = superviseScuba({
      ...f.base,
      env: { PATH: process.env.PATH },
      restartBaseMs: 10,
      maxFailures: 3,
      notice: (sentence) => notices.push(sentence),
    });
    await until('giving up', () => supervisor.state === 'gave-up');
    await new Promise((r) => setTimeout(r, 200));
    expect(lines(f.starts)).toHaveLength(4);
    expect(notices).toEqual([
      `claude-scuba exited with code 1; restarting it in 10 ms (attempt 1 of 3; its log: ${f.logPath})`,
      `claude-scuba exited with code 1; restarting it in 20 ms (attempt 2 of 3; its log: ${f.logPath})`,
      `claude-scuba exited with code 1; restarting it in 40 ms (attempt 3 of 3; its log: ${f.logPath})`,
      `claude-scuba failed 3 times in a row and is not restarted again; the server and the web UI keep running. Read ${f.logPath}, fix what it says, then restart npm start.`,
    ]);
    await supervisor.stop();
  });

  it('asks for a repair first: a repaired failure restarts at once, with the environment asked again', async () => {
    const f = setup(1, 1);
    let generation = 0;
    const notices: string[] = [];
    const supervisor = superviseScuba({
      ...f.base,
      env: () => ({ PATH: process.env.PATH, MARK: `token-${++generation}` }),
      // A restart that waited would not come within the test's 10 s.
      restartBaseMs: 60_000,
      repair: async (exit) => {
        notices.push(`repaired after ${exit.code}`);
        return true;
      },
      notice: (sentence) => notices.push(sentence),
    });
    await until('the second start', () => lines(f.logPath).length === 2);
    expect(lines(f.logPath)).toEqual(['started 1 token-1', 'started 2 token-2']);
    expect(notices).toEqual(['repaired after 1']);
    expect(supervisor.state).toBe('running');
    await supervisor.stop();
    expect(supervisor.state).toBe('stopped');
  });

  it('counts a child that could not be spawned as a failed start: retried, then given up, and stop() returns', async () => {
    const f = setup(0, 1);
    const notices: string[] = [];
    const supervisor = superviseScuba({
      ...f.base,
      env: { PATH: process.env.PATH },
      // Node emits 'error' (ENOENT) for a working directory that does not exist, and no 'exit'.
      cwd: f.missingDir,
      restartBaseMs: 10,
      maxFailures: 2,
      notice: (sentence) => notices.push(sentence),
    });
    await until('giving up', () => supervisor.state === 'gave-up');
    const why = `could not be started (spawn ${process.execPath} ENOENT)`;
    expect(notices).toEqual([
      `claude-scuba ${why}; restarting it in 10 ms (attempt 1 of 2; its log: ${f.logPath})`,
      `claude-scuba ${why}; restarting it in 20 ms (attempt 2 of 2; its log: ${f.logPath})`,
      `claude-scuba failed 2 times in a row and is not restarted again; the server and the web UI keep running. Read ${f.logPath}, fix what it says, then restart npm start.`,
    ]);
    expect(lines(f.starts)).toEqual([]);
    await supervisor.stop();
    expect(supervisor.state).toBe('stopped');
  });

  it('stops at once when stopped before its failed spawn has been reported', async () => {
    const f = setup(0, 1);
    const supervisor = superviseScuba({
      ...f.base,
      env: { PATH: process.env.PATH },
      cwd: f.missingDir,
    });
    await supervisor.stop();
    expect(supervisor.state).toBe('stopped');
    expect(supervisor.pid).toBeUndefined();
  });

  it('counts a spawn that throws (an environment too large for exec) as a failed start, not a crash', async () => {
    const f = setup(0, 1);
    const notices: string[] = [];
    const supervisor = superviseScuba({
      ...f.base,
      // More than exec takes (Linux: 128 KiB a string; macOS: 1 MiB in all): spawn throws E2BIG, no 'error'.
      env: { PATH: process.env.PATH, BIG: 'x'.repeat(2_000_000) },
      restartBaseMs: 10,
      maxFailures: 1,
      notice: (sentence) => notices.push(sentence),
    });
    await until('giving up', () => supervisor.state === 'gave-up');
    expect(notices[0]).toBe(
      `claude-scuba could not be started (spawn E2BIG); restarting it in 10 ms (attempt 1 of 1; its log: ${f.logPath})`,
    );
    expect(notices).toHaveLength(2);
    await supervisor.stop();
  });
});

describe('restartDelay', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [5, 16_000],
    [6, 30_000],
    [20, 30_000],
  ])('failure %i waits %i ms', (failures, ms) => expect(restartDelay(failures, 1_000, 30_000)).toBe(ms));
});
