import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';

export interface ScubaExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Why it could not be started at all (spawn failed: no child ran; code and signal are null). */
  readonly error?: Error;
}

export interface ScubaProcessOptions {
  /** Absolute path of `packages/claude-scuba/bin/claude-scuba.js`. */
  bin: string;
  configPath: string;
  /** The child's whole environment; a function is asked again at each start (a renewed token). */
  env: NodeJS.ProcessEnv | (() => NodeJS.ProcessEnv);
  /** The child's working directory; default this process's. */
  cwd?: string;
  /** The child's stdout and stderr are appended here. */
  logPath: string;
  logger: Logger;
  /** Restart delays grow from this; default 1 s. */
  restartBaseMs?: number;
  /** …up to this; default 30 s. */
  restartMaxMs?: number;
  /** Failures in a row (each run shorter than `stableMs`) before it gives up; default 8. */
  maxFailures?: number;
  /** A run this long resets the count of failures; default 60 s. */
  stableMs?: number;
  /**
   * Asked after the child failed, before a restart: resolves true when it
   * found and fixed the cause (the launcher: a revoked token, replaced), and
   * the child is restarted at once. Called at most once per failure.
   */
  repair?: (exit: ScubaExit) => Promise<boolean>;
  /** Plain sentences for the person running it (restarts, giving up). */
  notice?: (sentence: string) => void;
}

/** `running` (or about to), `waiting` to restart, `gave-up` (too many failures, or exit 2), `stopped`. */
export type ScubaState = 'running' | 'waiting' | 'gave-up' | 'stopped';

export interface ScubaSupervisor {
  /** The running child's pid, if one runs. */
  readonly pid: number | undefined;
  readonly state: ScubaState;
  /** Stops the child (SIGTERM, then SIGKILL after 10 s) and does not restart it. */
  stop(): Promise<void>;
}

/** The delay before restart number `failures` (1-based): base, 2×base, 4×base, … up to the cap. */
export function restartDelay(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}

function describeExit(exit: ScubaExit): string {
  if (exit.error !== undefined) return `could not be started (${exit.error.message})`;
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

const logged = (exit: ScubaExit) => ({ code: exit.code, signal: exit.signal, err: exit.error });

/**
 * Runs `claude-scuba` as a child process and restarts it when it dies on its
 * own, so a crash of the bot never takes the server down: with a growing
 * delay, and not forever (after `maxFailures` quick failures in a row it
 * stops trying and says so). Exit code 2 (bad config) is not retried: it
 * would fail the same way.
 */
export function superviseScuba(options: ScubaProcessOptions): ScubaSupervisor {
  const baseMs = options.restartBaseMs ?? 1_000;
  const maxMs = options.restartMaxMs ?? 30_000;
  const maxFailures = options.maxFailures ?? 8;
  const stableMs = options.stableMs ?? 60_000;
  const notice = options.notice ?? (() => {});
  mkdirSync(dirname(options.logPath), { recursive: true });
  const log = createWriteStream(options.logPath, { flags: 'a' });
  let child: ChildProcess | undefined;
  let state: ScubaState = 'running';
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let exited: Promise<void> = Promise.resolve();
  let repairing: Promise<unknown> = Promise.resolve();

  const afterFailure = async (exit: ScubaExit, ranMs: number): Promise<void> => {
    if (exit.code === 2) {
      state = 'gave-up';
      options.logger.info(
        { ...logged(exit), logPath: options.logPath },
        'claude-scuba refused its config; not restarting',
      );
      notice(
        `claude-scuba refused its config (${options.configPath}) and is not restarted: see ${options.logPath}. The server and the web UI keep running.`,
      );
      return;
    }
    failures = ranMs >= stableMs ? 1 : failures + 1;
    let repaired = false;
    try {
      repaired = (await options.repair?.(exit)) ?? false;
    } catch (error) {
      options.logger.info({ err: error }, 'repairing claude-scuba failed');
      notice(`claude-scuba ${describeExit(exit)}, and fixing it failed: ${(error as Error).message}`);
    }
    if (state === 'stopped') return;
    if (failures > maxFailures) {
      state = 'gave-up';
      options.logger.info(
        { ...logged(exit), failures: failures - 1, logPath: options.logPath },
        'claude-scuba gave up',
      );
      notice(
        `claude-scuba failed ${maxFailures} times in a row and is not restarted again; the server and the web UI keep running. ` +
          `Read ${options.logPath}, fix what it says, then restart npm start.`,
      );
      return;
    }
    const delay = repaired ? 0 : restartDelay(failures, baseMs, maxMs);
    state = 'waiting';
    options.logger.info(
      { ...logged(exit), delayMs: delay, failures, logPath: options.logPath },
      'claude-scuba stopped',
    );
    if (!repaired)
      notice(
        `claude-scuba ${describeExit(exit)}; restarting it in ${delay < 1_000 ? `${delay} ms` : `${Math.round(delay / 1_000)} s`} (attempt ${failures} of ${maxFailures}; its log: ${options.logPath})`,
      );
    timer = setTimeout(start, delay);
  };

  function start(): void {
    if (state === 'stopped') return;
    state = 'running';
    const startedAt = Date.now();
    let resolveExit = () => {};
    exited = new Promise((resolve) => {
      resolveExit = resolve;
    });
    // A failed spawn emits 'error' and perhaps (Node does not promise either way) 'exit' too: one failure.
    let ended = false;
    const end = (exit: ScubaExit) => {
      if (ended) return;
      ended = true;
      child = undefined;
      resolveExit();
      if (state === 'stopped') return;
      repairing = afterFailure(exit, Date.now() - startedAt);
    };
    let current: ChildProcess;
    try {
      const env = typeof options.env === 'function' ? options.env() : options.env;
      current = spawn(process.execPath, [options.bin, '--config', options.configPath], {
        cwd: options.cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      // Some failures throw instead (an environment too large: E2BIG); here, in a timer, that would crash us.
      end({ code: null, signal: null, error: error instanceof Error ? error : new Error(String(error)) });
      return;
    }
    child = current;
    current.stdout?.pipe(log, { end: false });
    current.stderr?.pipe(log, { end: false });
    current.on('exit', (code, signal) => end({ code, signal }));
    current.on('error', (error) => {
      // With a pid the child did start, and this is a signal that could not be sent: its exit comes on its own.
      if (current.pid === undefined) end({ code: null, signal: null, error });
      else options.logger.info({ err: error }, 'claude-scuba could not be signalled');
    });
  }
  start();

  return {
    get pid() {
      return child?.pid;
    },
    get state() {
      return state;
    },
    async stop() {
      state = 'stopped';
      clearTimeout(timer);
      await repairing;
      clearTimeout(timer);
      const running = child;
      if (running !== undefined && running.pid === undefined) {
        // A spawn that failed has no pid, and its 'error' is still to come: kill() would signal pid 0,
        // which is this process's whole group (the server, the web UI, npm, the shell).
        await exited;
      } else if (running !== undefined && running.exitCode === null && running.signalCode === null) {
        running.kill('SIGTERM');
        const killer = setTimeout(() => running.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      await new Promise<void>((resolveEnd) => log.end(resolveEnd));
    },
  };
}
