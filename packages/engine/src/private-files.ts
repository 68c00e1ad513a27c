import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * The bot's own files are its user's alone (the root README, "One Unix user per bot"; claude-scuba and the Discord bot alike):
 * folders 0700, the state database 0600, and a warning at start-up for a
 * config or secrets file that its group or the world may read.
 */

/** Creates `path` (and missing parents) as 0700, and narrows it to 0700 where it exists wider. */
export function makePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o700);
}

/**
 * Makes a SQLite database file 0600 before anything opens it (SQLite gives
 * its `-wal` and `-shm` files the database's own mode), narrowing an older
 * one and its companions too. Its folder is created 0700 where missing.
 */
export function makePrivateDatabase(path: string): void {
  if (path === ':memory:') return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const file of ['', '-wal', '-shm', '-journal'].map((suffix) => `${path}${suffix}`)) {
    if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  }
}

/** A file and its permission bits. */
export interface FileMode {
  readonly path: string;
  readonly mode: number;
  readonly what: string;
}

/** One warning per file its group or other users may read or write. Pure. */
export function readableByOthers(files: readonly FileMode[]): string[] {
  return files
    .filter((file) => (file.mode & 0o077) !== 0)
    .map(
      (file) =>
        `${file.what} ${file.path} is mode ${(file.mode & 0o777).toString(8).padStart(4, '0')}: other users may read it; make it the bot user's alone (chmod 600 ${file.path})`,
    );
}

/** Whether a file name is an env file by the usual spellings (`.env`, `bot.env`, `.env.local`). Pure. */
export function isEnvFileName(name: string): boolean {
  return name === '.env' || name.startsWith('.env.') || name.endsWith('.env');
}

/**
 * The config file, the secret files it names, and every env file beside it,
 * with their modes (what exists and can be looked at).
 */
export function secretFileModes(configPath: string | undefined, secretFiles: readonly string[]): FileMode[] {
  const files: Array<{ path: string; what: string }> = [];
  if (configPath !== undefined) {
    files.push({ path: configPath, what: 'the config file' });
    let names: string[] = [];
    try {
      names = readdirSync(dirname(configPath));
    } catch {
      // a folder we may not list: nothing beside the config to look at
    }
    for (const name of names.filter(isEnvFileName).sort())
      files.push({ path: join(dirname(configPath), name), what: 'the env file' });
  }
  for (const path of secretFiles) files.push({ path, what: 'the secret file' });
  const seen = new Set<string>();
  return files.flatMap(({ path, what }) => {
    if (seen.has(path) || basename(path) === '') return [];
    seen.add(path);
    try {
      const stat = statSync(path);
      return stat.isFile() ? [{ path, what, mode: stat.mode }] : [];
    } catch {
      return [];
    }
  });
}
