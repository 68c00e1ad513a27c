/**
 * Runs the real `bubble-server` binary for the CLI tests (not part of the package's exports).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const BIN = fileURLToPath(new URL('../../bin/bubble-server.js', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Runs one command to its end: stdout and stderr, or the error (with `code`) of a non-zero exit. */
export const runCli = (args: string[]) => promisify(execFile)(process.execPath, [BIN, ...args]);

export interface ServeProcess {
  child: ChildProcess;
  /** The URL of the listening line. */
  listening: Promise<string>;
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

/** Starts `serve` (by default `node bin/bubble-server.js serve`) and resolves with the URL of its listening line. */
export function serveCli(args: string[], command: [string, ...string[]] = [process.execPath, BIN]): ServeProcess {
  const [file, ...head] = command;
  const child = spawn(file, [...head, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], cwd: REPO_ROOT });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c) => {
      stdout += c;
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return { child, listening, exited, output: () => ({ stdout, stderr }) };
}
