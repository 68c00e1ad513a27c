import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The `bubble` terminal client's binary, run as a person runs it. */
export const BUBBLE_CLI = resolve(here, '../../../sdk/bin/bubble.js');

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `bubble <args>` against `url` with `token` (BUBBLE_URL / BUBBLE_TOKEN), to completion. */
export function bubble(url: string, token: string, ...args: string[]): Promise<CliRun> {
  return bubbleWithEnv({}, url, token, ...args);
}

/** `bubble`, with more in its environment (NODE_EXTRA_CA_CERTS, say). */
export function bubbleWithEnv(
  env: Record<string, string>,
  url: string,
  token: string,
  ...args: string[]
): Promise<CliRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [BUBBLE_CLI, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', BUBBLE_URL: url, BUBBLE_TOKEN: token, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}
