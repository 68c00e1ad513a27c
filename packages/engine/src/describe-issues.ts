import type { z } from 'zod';

/** Settings whose values must never appear in a message, even when they are wrong. */
const SECRET_KEYS = new Set(['token', 'apiKey', 'oauthToken', 'secretsKey']);

/** `bubble.token`, `approvals.approvers[1]`; the whole config is "the config". */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? 'the config' : out;
}

export function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value: unknown = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/**
 * Turns zod issues into one plain sentence each, naming the setting and,
 * except for secrets, the value that was given.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string[] {
  return issues.map((issue) => {
    const where = formatPath(issue.path);
    const value = valueAt(input, issue.path);
    if (value === undefined && issue.path.length > 0) return `${where} is missing`;
    const secret = issue.path.some((key) => typeof key === 'string' && SECRET_KEYS.has(key));
    const got = secret ? '' : ` (got ${describeValue(value)})`;
    return `${where} ${issue.message}${got}`;
  });
}

/** Levenshtein distance, for "did you mean" on misspelt keys. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(
        row[j]! + 1,
        row[j - 1]! + 1,
        previous + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1),
      );
      previous = current;
    }
  }
  return row[b.length]!;
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: z.core.$ZodType };
    if ((def.type === 'default' || def.type === 'optional' || def.type === 'prefault') && def.innerType)
      current = def.innerType;
    else return current;
  }
}

/**
 * Keys the schema does not know, as warnings ("claude.tolls is not a known
 * setting; did you mean claude.tools?"). Walks plain objects only.
 */
export function unknownKeys(schema: z.core.$ZodType, input: unknown, path: PropertyKey[] = []): string[] {
  const inner = unwrap(schema);
  const def = inner._zod.def as { type: string; shape?: Record<string, z.core.$ZodType> };
  if (def.type !== 'object' || !def.shape || typeof input !== 'object' || input === null || Array.isArray(input))
    return [];
  const warnings: string[] = [];
  const known = Object.keys(def.shape);
  for (const [key, value] of Object.entries(input)) {
    const child = def.shape[key];
    if (child) {
      warnings.push(...unknownKeys(child, value, [...path, key]));
      continue;
    }
    const close = known
      .filter((name) => distance(name, key) <= 2)
      .sort((x, y) => distance(x, key) - distance(y, key))[0];
    const hint = close === undefined ? '' : `; did you mean ${formatPath([...path, close])}?`;
    warnings.push(`${formatPath([...path, key])} is not a known setting (ignored)${hint}`);
  }
  return warnings;
}
