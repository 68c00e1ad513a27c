import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';

export interface ScubaProcessOptions {
  /** Absolute path of `packages/claude-scuba/bin/claude-scuba.js`. */
  bin: string;
  configPath: string;
  /** The child's whole environment. */
  env: NodeJS.ProcessEnv;
  /** The child's stdout and stderr are appended here. */
  logPath: string;
  logger: Logger;
  /** Restart delays grow from this; default 1 s, capped at 30 s. */
  restartBaseMs?: number;
}

export interface ScubaSupervisor {
  /** The running child's pid, if one runs. */
  readonly pid: number | undefined;
  /** Stops the child (SIGTERM, then SIGKILL after 10 s) and does not restart it. */
  stop(): Promise<void>;
}

/**
 * Runs `claude-scuba` as a child process and restarts it when it dies on its
 * own (with a growing delay), so a crash of the bot never takes the server
 * down. Exit code 2 (bad config) is not retried: it would fail the same way.
 */
export function superviseScuba(options: ScubaProcessOptions): ScubaSupervisor {
  mkdirSync(dirname(options.logPath), { recursive: true });
  const log = createWriteStream(options.logPath, { flags: 'a' });
  let child: ChildProcess | undefined;
  let stopping = false;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = (): void => {
    const startedAt = Date.now();
    const current = spawn(process.execPath, [options.bin, '--config', options.configPath], {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = current;
    current.stdout?.pipe(log, { end: false });
    current.stderr?.pipe(log, { end: false });
    exited = new Promise((resolveExit) => {
      current.on('exit', (code, signal) => {
        child = undefined;
        resolveExit();
        if (stopping) return;
        if (code === 2) {
          options.logger.error({ code, logPath: options.logPath }, 'claude-scuba refused its config; not restarting');
          return;
        }
        failures = Date.now() - startedAt > 60_000 ? 1 : failures + 1;
        const delay = Math.min(30_000, (options.restartBaseMs ?? 1_000) * 2 ** (failures - 1));
        options.logger.warn(
          { code, signal, delayMs: delay, logPath: options.logPath },
          'claude-scuba stopped; restarting',
        );
        timer = setTimeout(start, delay);
      });
    });
    current.on('error', (error) => options.logger.error({ err: error }, 'claude-scuba could not be started'));
  };
  start();

  return {
    get pid() {
      return child?.pid;
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      const running = child;
      if (running !== undefined && running.exitCode === null && running.signalCode === null) {
        running.kill('SIGTERM');
        const killer = setTimeout(() => running.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      await new Promise<void>((resolveEnd) => log.end(resolveEnd));
    },
  };
}
