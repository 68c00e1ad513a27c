/** Process plumbing for the benchmark: start servers, fork workers, read RSS. */
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface StartedServer {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT` */
  url: string;
}

/** Starts a server process and resolves once it prints `listening on http://HOST:PORT`. */
export function startServer(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<StartedServer> {
  const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in time: ${args.join(' ')}\n${output.slice(-2000)}`));
    }, options.timeoutMs ?? 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /listening on (http:\/\/[\w.:[\]-]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        // Keep draining the pipes so a chatty server never blocks on a full pipe.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ child, url: (match[1] as string).replace(/\/$/, '') });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening: ${args.join(' ')}\n${output.slice(-2000)}`));
    });
  });
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function runCommand(command: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(command, args, { maxBuffer: 10 * 1024 * 1024 });
  return stdout;
}

/**
 * Writes out every dirty page of the machine (`sync`) and says how long it took: a section that
 * wrote a lot (a million seeded events) leaves the kernel flushing for a while, and the next
 * section's durable commits would wait behind it. Called before a latency section starts.
 */
export async function settleDisk(): Promise<number> {
  const startedAt = performance.now();
  await runCommand('sync', []);
  return performance.now() - startedAt;
}

/** A worker forked from a compiled bench module, spoken to with IPC messages. */
export class Worker<TJob> {
  readonly #child: ChildProcess;
  readonly #inbox: unknown[] = [];
  #waiter: ((message: unknown) => void) | null = null;
  #exitError: Error | null = null;

  constructor(modulePath: string, job: TJob) {
    this.#child = fork(modulePath, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.#child.on('message', (message) => {
      if (this.#waiter) {
        const waiter = this.#waiter;
        this.#waiter = null;
        waiter(message);
      } else this.#inbox.push(message);
    });
    // 'close', not 'exit': a worker that answers and exits at once may be seen to exit before its
    // last message is read; 'close' comes after its IPC channel has been read to the end.
    this.#child.once('close', (code) => {
      this.#exitError = new Error(`worker ${modulePath} exited with ${code}`);
    });
    this.#child.send(job as object);
  }

  send(message: string): void {
    this.#child.send(message);
  }

  /** The next message; rejects if it carries `error` or the worker is gone. */
  next<T>(timeoutMs = 120_000): Promise<T> {
    const check = (message: unknown): T => {
      if (typeof message === 'object' && message !== null && 'error' in message)
        throw new Error(String((message as { error: unknown }).error));
      return message as T;
    };
    if (this.#inbox.length > 0) return Promise.resolve().then(() => check(this.#inbox.shift()));
    if (this.#exitError) return Promise.reject(this.#exitError);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('worker timed out')), timeoutMs);
      const onExit = (): void => {
        clearTimeout(timer);
        reject(this.#exitError ?? new Error('worker exited'));
      };
      this.#child.once('close', onExit);
      this.#waiter = (message) => {
        clearTimeout(timer);
        this.#child.off('close', onExit);
        try {
          resolve(check(message));
        } catch (error) {
          reject(error as Error);
        }
      };
    });
  }

  async stop(): Promise<void> {
    await stopProcess(this.#child);
  }
}

/** Resident set size of a process, in KiB (Linux /proc). */
export async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/** CPU time (user + system) the process has used so far, in ms; Linux `/proc` (clock ticks of 10 ms). */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function httpJson<T>(method: string, url: string, token: string | undefined, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
