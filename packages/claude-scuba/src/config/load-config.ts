import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describeConfigProblems, readConfigJson } from '@bubble/engine';
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
  const read = readConfigJson(file, readFile);
  if (!read.ok)
    throw new ScubaError('config_unreadable', read.problem, { cause: read.cause, problems: [read.problem] });
  const { path, json } = read;
  const resolved = resolveConfig(json, {
    env: options.env,
    baseDir: dirname(path),
    readFile,
    isRoot: options.isRoot,
  });
  if (!resolved.ok)
    throw new ScubaError('config_invalid', describeConfigProblems(path, resolved.problems), {
      problems: resolved.problems,
    });
  return { config: resolved.config, warnings: resolved.warnings, path };
}
