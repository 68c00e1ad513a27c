import { inspect } from 'node:util';
import { z } from 'zod';

/**
 * Where a secret comes from: an environment variable, a file, or (tolerated,
 * because the seed tells owners to paste the token into the config) the
 * value itself.
 */
export const SecretRefSchema = z.union(
  [z.strictObject({ env: z.string().min(1) }), z.strictObject({ file: z.string().min(1) }), z.string().min(1)],
  { error: 'must be {"env": "NAME"} or {"file": "path"} (or the secret itself as a non-empty string)' },
);
export type SecretRef = z.infer<typeof SecretRefSchema>;

const REDACTED = '[secret]';

/**
 * A resolved secret. It never prints its value: `String()`, JSON and
 * `util.inspect` (hence pino and console) all give `[secret]`. Only
 * `reveal()` hands the value out, at the one place that needs it.
 */
export class Secret {
  readonly #value: string;
  /** Where it came from, safe to log: `env:NAME`, `file:/path` or `inline`. */
  readonly source: string;

  constructor(value: string, source: string) {
    this.#value = value;
    this.source = source;
    Object.freeze(this);
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${this.source})`;
  }
}

export interface SecretSources {
  /** The process environment, passed in (nothing below main.ts reads process.env). */
  env: Readonly<Record<string, string | undefined>>;
  /** Reads a file as UTF-8; throws like fs.readFileSync when it cannot. */
  readFile: (path: string) => string;
  /** Turns a file reference into an absolute path (relative to the config file). */
  resolvePath: (path: string) => string;
}

export type SecretResolution = { ok: true; secret: Secret } | { ok: false; problem: string };

/**
 * Resolves one secret reference. `where` names the setting (`bubble.token`)
 * for the problem text; the value itself is never part of any message.
 * A file's trailing newline is dropped (files written by `echo` have one).
 */
export function resolveSecret(ref: SecretRef, where: string, sources: SecretSources): SecretResolution {
  if (typeof ref === 'string') return { ok: true, secret: new Secret(ref, 'inline') };
  if ('env' in ref) {
    const value = sources.env[ref.env];
    if (value === undefined) return { ok: false, problem: `${where}: the environment variable ${ref.env} is not set` };
    if (value.trim() === '') return { ok: false, problem: `${where}: the environment variable ${ref.env} is empty` };
    return { ok: true, secret: new Secret(value, `env:${ref.env}`) };
  }
  const path = sources.resolvePath(ref.file);
  let text: string;
  try {
    text = sources.readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'cannot be read (permission denied)'
          : 'cannot be read';
    return { ok: false, problem: `${where}: the file ${path} ${why}` };
  }
  const value = text.replace(/\r?\n$/, '');
  if (value.trim() === '') return { ok: false, problem: `${where}: the file ${path} is empty` };
  return { ok: true, secret: new Secret(value, `file:${path}`) };
}
