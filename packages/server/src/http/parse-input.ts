import type { z } from 'zod';
import { describeTextProblem, formatPath, textProblem } from '../domain/text-rules.js';
import { invalidRequest } from '../errors/bubble-error.js';

/** Parses a value with a zod schema; a violation is a 400 listing every issue. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  throw invalidRequest(`invalid ${what}: ${summary}`, { issues });
}

/**
 * Query parameters as a plain object; a name given twice (`?after=2&after=3`) is a 400, not a
 * guess, and so is a name or value the Text rule refuses (`%00`).
 */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const object: Record<string, string> = {};
  for (const [name, value] of query) {
    const problem = textProblem(name) ?? textProblem(value);
    if (problem !== null) {
      const field = `query.${formatPath([name])}`;
      throw invalidRequest(describeTextProblem(problem, `query parameter ${formatPath([name])}`), { problem, field });
    }
    if (Object.hasOwn(object, name)) {
      throw invalidRequest(`invalid query: ${name} is given more than once`, {
        issues: [{ path: name, message: 'given more than once' }],
      });
    }
    object[name] = value;
  }
  return object;
}
