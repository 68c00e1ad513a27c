import { describeTextProblem, textProblem } from '../domain/text-rules.js';
import { invalidRequest } from '../errors/bubble-error.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Route<H> {
  method: HttpMethod;
  segments: string[];
  handler: H;
}

export type RouteMatch<H> = { handler: H; params: Record<string, string> } | null;

/**
 * A tiny router: patterns like `/v1/threads/:id/events`, matched segment by
 * segment (each segment is percent-decoded; a malformed escape is a 400, and so is a parameter
 * that decodes to text the Text rule refuses, `%00`).
 */
export class Router<H> {
  readonly #routes: Route<H>[] = [];

  add(method: HttpMethod, pattern: string, handler: H): this {
    this.#routes.push({ method, segments: pattern.split('/').slice(1), handler });
    return this;
  }

  match(method: string, pathname: string): RouteMatch<H> {
    const parts = pathname.split('/').slice(1);
    for (const route of this.#routes) {
      if (route.method !== method || route.segments.length !== parts.length) continue;
      const params = matchSegments(route.segments, parts);
      if (params !== null) return { handler: route.handler, params };
    }
    return null;
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i += 1) {
    const p = pattern[i]!;
    const part = parts[i]!;
    if (p.startsWith(':')) {
      if (part === '') return null;
      const name = p.slice(1);
      const value = decodeSegment(part);
      const problem = textProblem(value);
      if (problem !== null) {
        const field = `path.${name}`;
        throw invalidRequest(describeTextProblem(problem, `path parameter ${name}`), { problem, field });
      }
      params[name] = value;
    } else if (p !== part) {
      return null;
    }
  }
  return params;
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidRequest(`malformed percent-encoding in path segment "${segment}"`);
  }
}
