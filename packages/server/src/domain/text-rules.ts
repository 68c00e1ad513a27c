/**
 * protocol.md's Text rule, and the other reasons a parsed body could not be stored exactly. Every
 * string the server accepts (values and object keys at any depth of a body, path and query
 * parameters, WebSocket frames) is valid Unicode without U+0000: JSON's `\u0000` escape parses into
 * a NUL, which PostgreSQL's text refuses (SQLite would keep it, and an export would then not
 * import); `\ud800` parses into a lone surrogate, which no UTF-8 store keeps exactly. Pure.
 */

/**
 * How deep a body may nest arrays and objects. JSON.parse takes thousands of levels, but every later
 * recursive walk (JSON.stringify of an event's `data`, zod) would overflow the stack on them.
 */
export const MAX_JSON_DEPTH = 100;

/** Why a string may not be stored. */
export type TextProblem = 'nul' | 'lone_surrogate';

/** What makes a parsed body unfit to store exactly. */
export type JsonProblem = 'too_deep' | 'non_finite_number' | TextProblem;

/** A problem and where it is: the keys and indexes from the body's top down to it. */
export interface JsonProblemAt {
  problem: JsonProblem;
  path: Array<string | number>;
}

/** Why `text` may not be stored, or null. Two native scans, no allocation. */
export function textProblem(text: string): TextProblem | null {
  if (text.includes('\u0000')) return 'nul';
  return text.isWellFormed() ? null : 'lone_surrogate';
}

/**
 * One walk over a parsed body: does it nest arrays or objects more than `max` levels deep (a bare
 * object is one level), hold a number JSON cannot write back (`1e400` parses as Infinity, which
 * would be stored as null), or a string or key that breaks the Text rule? The first problem found,
 * with its path, or null. It recurses at most `max + 1` frames, so it cannot overflow itself, and
 * allocates nothing unless it finds a problem.
 */
export function jsonProblem(value: unknown, max: number): JsonProblemAt | null {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem === null ? null : { problem, path: [] };
  }
  if (typeof value === 'number') return Number.isFinite(value) ? null : { problem: 'non_finite_number', path: [] };
  if (typeof value !== 'object' || value === null) return null;
  if (max === 0) return { problem: 'too_deep', path: [] };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = jsonProblem(value[i], max - 1);
      if (found !== null) {
        found.path.unshift(i);
        return found;
      }
    }
    return null;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const keyProblem = textProblem(key);
    if (keyProblem !== null) return { problem: keyProblem, path: [key] };
    const found = jsonProblem(record[key], max - 1);
    if (found !== null) {
      found.path.unshift(key);
      return found;
    }
  }
  return null;
}

/** A key that reads as itself in a dotted path; any other is written as a JSON string. */
const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

/**
 * A path as error messages write it, as zod's issue paths are (`events.1.data.text`), with a key
 * that is not plain quoted and escaped as JSON (`data."k\u0000"`), so the answer itself is valid
 * text and shows which key was meant.
 */
export function formatPath(path: ReadonlyArray<string | number>): string {
  return path.map((part) => (typeof part === 'number' || PLAIN_KEY.test(part) ? part : JSON.stringify(part))).join('.');
}

const TEXT_PROBLEM_MESSAGES: Record<TextProblem, string> = {
  nul: 'a NUL character (U+0000, the \\u0000 escape), which no text may hold',
  lone_surrogate:
    'a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not valid Unicode; send the character itself, or both halves of its pair',
};

/** A message saying that `what` (`path parameter id`) has `problem`. */
export function describeTextProblem(problem: TextProblem, what: string): string {
  return `${what} has ${TEXT_PROBLEM_MESSAGES[problem]}`;
}

/**
 * The message and details of the 400 that answers a problem found in `what` (`request body`, a
 * frame): `details.field` is where it is, as `formatPath` writes it, for a text problem.
 */
export function describeJsonProblem(
  found: JsonProblemAt,
  what: string,
): { message: string; details: Record<string, unknown> } {
  const field = formatPath(found.path);
  switch (found.problem) {
    case 'too_deep':
      return {
        message: `${what} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
        details: { maxDepth: MAX_JSON_DEPTH },
      };
    case 'non_finite_number':
      return {
        message: `${what} has a number JSON cannot represent (such as 1e400)${field === '' ? '' : ` at ${field}`}: send it as a string`,
        details: { problem: found.problem, field },
      };
    default:
      return {
        message: describeTextProblem(found.problem, field === '' ? what : `${what} field ${field}`),
        details: { problem: found.problem, field },
      };
  }
}
