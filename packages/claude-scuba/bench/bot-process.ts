import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '../bin/claude-scuba.js');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type LogLine = Record<string, unknown>;

/** A real `claude-scuba` process, its JSON log lines read as they come. */
export interface BotProcess {
  readonly child: ChildProcess;
  readonly logs: LogLine[];
  waitLog(predicate: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  count(predicate: (l: LogLine) => boolean): number;
  /** Resident memory (VmRSS), in KiB. */
  rssKb(): number;
  stop(): Promise<void>;
}

export function startBotProcess(configPath: string, env: Record<string, string>, nodeArgs: string[] = []): BotProcess {
  const child = spawn(process.execPath, [...nodeArgs, BIN, '--config', configPath], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logs: LogLine[] = [];
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        /* not JSON */
      }
    }
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    logs,
    async waitLog(predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const line = logs.find(predicate);
        if (line) return line;
        if (child.exitCode !== null) throw new Error(`the bot exited (${child.exitCode}) before the log line came`);
        await sleep(20);
      }
      throw new Error('timed out waiting for a bot log line');
    },
    count: (predicate) => logs.filter(predicate).length,
    rssKb() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
