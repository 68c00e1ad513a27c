import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ScubaError } from '../errors.js';
import { resolveConfig, type ScubaConfig } from './resolve-config.js';

export interface LoadConfigOptions {
  /** The process environment, passed in by main.ts. */
  env: Readonly<Record<string, string | undefined>>;
  /** Whether the process runs as root. */
  isRoot?: boolean;
  /** Reads a file as UTF-8 (default: fs.readFileSync). */
  readFile?: (path: string) => string;
}

export interface LoadedConfig {
  config: ScubaConfig;
  /** Things worth a log line that do not stop the bot (unknown keys). */
  warnings: string[];
  /** The absolute path the config was read from. */
  path: string;
}

/**
 * Reads, validates and resolves a config file. Throws a `ScubaError`:
 * `config_unreadable` when the file cannot be read or parsed as JSON,
 * `config_invalid` with every problem listed otherwise.
 */
export function loadConfigFile(file: string, options: LoadConfigOptions): LoadedConfig {
  const readFile = options.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const path = resolve(file);
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : 'cannot be read';
    throw new ScubaError('config_unreadable', `the config file ${path} ${why}`, { cause: error, problems: [`the config file ${path} ${why}`] });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const problem = `the config file ${path} is not valid JSON: ${(error as Error).message}`;
    throw new ScubaError('config_unreadable', problem, { cause: error, problems: [problem] });
  }
  const resolved = resolveConfig(json, {
    env: options.env,
    baseDir: dirname(path),
    readFile,
    ...(options.isRoot === undefined ? {} : { isRoot: options.isRoot }),
  });
  if (!resolved.ok) {
    const count = resolved.problems.length;
    throw new ScubaError(
      'config_invalid',
      `the config file ${path} has ${count} problem${count === 1 ? '' : 's'}:\n${resolved.problems.map((p) => `  - ${p}`).join('\n')}`,
      { problems: resolved.problems },
    );
  }
  return { config: resolved.config, warnings: resolved.warnings, path };
}
