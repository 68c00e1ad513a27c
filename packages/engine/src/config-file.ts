import { isAbsolute, resolve } from 'node:path';
import { resolveSecret, type Secret, type SecretRef, type SecretSources } from './secret.js';

/**
 * What both bots' binaries share about their config file: finding it on the
 * command line, reading it as JSON, resolving its secrets while collecting
 * every problem, and saying all of them at once. Each bot keeps its own
 * schema and turns a failure into its own error.
 */

/** `--config <file>` or `--config=<file>`; undefined when absent. */
export function configPathFromArgv(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--config') return argv[i + 1];
    if (arg.startsWith('--config=')) return arg.slice('--config='.length);
  }
  return undefined;
}

export type ConfigJson =
  | { ok: true; path: string; json: unknown }
  | { ok: false; path: string; problem: string; cause: unknown };

/** Reads a config file as JSON; the problem says, in words, why it could not be. */
export function readConfigJson(file: string, readFile: (path: string) => string): ConfigJson {
  const path = resolve(file);
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : 'cannot be read';
    return { ok: false, path, problem: `the config file ${path} ${why}`, cause: error };
  }
  try {
    return { ok: true, path, json: JSON.parse(text) };
  } catch (error) {
    return {
      ok: false,
      path,
      problem: `the config file ${path} is not valid JSON: ${(error as Error).message}`,
      cause: error,
    };
  }
}

/** "the config file X has 2 problems:" and one indented line per problem. */
export function describeConfigProblems(path: string, problems: readonly string[]): string {
  const count = problems.length;
  return `the config file ${path} has ${count} problem${count === 1 ? '' : 's'}:\n${problems.map((p) => `  - ${p}`).join('\n')}`;
}

/**
 * Resolves a config's secrets and paths against its folder, collecting every
 * problem instead of stopping at the first (`problems` grows as `secret` is called).
 */
export function configResolver(context: {
  env: Readonly<Record<string, string | undefined>>;
  baseDir: string;
  readFile: (path: string) => string;
}) {
  const problems: string[] = [];
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(context.baseDir, p));
  const sources: SecretSources = { env: context.env, readFile: context.readFile, resolvePath: abs };
  return {
    problems,
    abs,
    secret(ref: SecretRef, where: string): Secret | undefined {
      const resolved = resolveSecret(ref, where, sources);
      if (resolved.ok) return resolved.secret;
      problems.push(resolved.problem);
      return undefined;
    },
  };
}
