import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BUBBLE_BIN = fileURLToPath(new URL('../../bin/bubble.js', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node bin/bubble.js …` to completion. `env` replaces BUBBLE_URL / BUBBLE_TOKEN. */
export function runBubble(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnBubble(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function spawnBubble(
  args: string[],
  env: Record<string, string | undefined> = {},
): ChildProcessWithoutNullStreams {
  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith('BUBBLE_')) childEnv[key] = value;
  for (const [key, value] of Object.entries(env)) if (value !== undefined) childEnv[key] = value;
  return spawn(process.execPath, [BUBBLE_BIN, ...args], { env: childEnv, stdio: 'pipe' });
}

/** A running `bubble tail`: collects its output lines and waits for the ones a test expects. */
export class TailProcess {
  readonly lines: string[] = [];
  stderr = '';
  #buffer = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.#buffer += chunk.toString();
      const parts = this.#buffer.split('\n');
      this.#buffer = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  }

  async waitForLine(predicate: (line: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find(predicate);
      if (found !== undefined) return found;
      if (Date.now() > deadline)
        throw new Error(`tail never printed ${what}; stdout:\n${this.lines.join('\n')}\nstderr:\n${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async waitForStderr(text: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stderr.includes(text)) {
      if (Date.now() > deadline) throw new Error(`tail never wrote "${text}" to stderr; stderr:\n${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
