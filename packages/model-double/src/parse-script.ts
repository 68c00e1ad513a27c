import { ScriptSchema, type Script } from './script.js';

/** A script that failed validation; `problems` lists every issue, one line each. */
export class ScriptError extends Error {
  readonly code = 'MODEL_DOUBLE_INVALID_SCRIPT';
  constructor(readonly problems: readonly string[]) {
    super(`invalid model double script:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ScriptError';
  }
}

/** Validates a script (e.g. parsed from JSON). Throws ScriptError listing every problem. */
export function parseScript(value: unknown): Script {
  const result = ScriptSchema.safeParse(value);
  if (result.success) return result.data;
  throw new ScriptError(
    result.error.issues.map((issue) => {
      const where = issue.path.length === 0 ? 'script' : formatPath(issue.path);
      return `${where}: ${issue.message}`;
    }),
  );
}

/** Parses script text (JSON). Throws ScriptError for bad JSON too. */
export function parseScriptJson(text: string): Script {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ScriptError([`not valid JSON: ${(err as Error).message}`]);
  }
  return parseScript(value);
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('')
    .replace(/^\[(\d+)\]/, 'rule $1');
}
