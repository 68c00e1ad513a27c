import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '../../../..');
export const LAUNCHER_BIN = resolve(here, '../../bin/bubble-start.js');
export const SERVER_BIN = resolve(here, '../../../server/bin/bubble-server.js');

/** A running `bubble-start` (or `npm start`), its output as it comes. */
export interface LauncherProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<number | null>;
  /** Resolves with the sign-in link once printed; rejects if the process ends first. */
  link(timeoutMs?: number): Promise<string>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * Starts the launcher as a person would: `node bin/bubble-start.js …` (via
 * `node`), or `npm start -- …` from the repo root (via `npm`, in a process
 * group of its own, as a terminal would run it). No Claude credential: the double.
 */
export function startLauncher(
  args: string[],
  options: { via?: 'node' | 'npm'; env?: Record<string, string>; home?: string } = {},
): LauncherProcess {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...(options.home ? { HOME: options.home } : {}),
    ...options.env,
  };
  const child =
    (options.via ?? 'node') === 'node'
      ? spawn(process.execPath, [LAUNCHER_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('npm', ['start', '--', ...args], {
          cwd: REPO_ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async link(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = /^Sign in: (\S+)$/m.exec(out);
        if (match) return match[1]!;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`the launcher printed no link:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Processes whose command line is `… --config <dataDir>/launcher/scuba.json` (claude-scuba). */
export function scubaProcesses(dataDir: string): number[] {
  const needle = join(dataDir, 'launcher', 'scuba.json');
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.some((arg, i) => arg === needle && args[i - 1] === '--config')) pids.push(Number(entry));
    } catch {
      // gone already
    }
  }
  return pids;
}

export async function until(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function listening(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => true,
    () => false,
  );
}
