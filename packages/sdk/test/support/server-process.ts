import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';

/** The real server binary, as an operator starts it. */
export const SERVER_BIN = fileURLToPath(new URL('../../../server/bin/bubble-server.js', import.meta.url));

/** A port that was free a moment ago (the server must come back on the same one after a kill). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** `bubble-server principal create-human <id> --data <dir>`: the plaintext token, printed once. */
export async function createHumanWithCli(dataDir: string, principalId: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    SERVER_BIN,
    'principal',
    'create-human',
    principalId,
    '--data',
    dataDir,
  ]);
  const parsed = JSON.parse(stdout.trim()) as { token: { token: string } };
  return parsed.token.token;
}

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** SIGKILL, then wait for the process to be gone. */
  kill9(): Promise<void>;
  /** SIGTERM, then wait. */
  stop(): Promise<void>;
}

/** `bubble-server serve --host 127.0.0.1 --port <port> --data <dir>`, resolved once it prints `listening on`. */
export async function startServerProcess(dataDir: string, port: number): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [SERVER_BIN, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data', dataDir, '--log-level', 'warn'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString());
    if (stderr.length > 50) stderr.shift();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr.join('')}`)), 15_000);
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening: ${stderr.join('')}`));
    });
  });
  return {
    url,
    child,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
