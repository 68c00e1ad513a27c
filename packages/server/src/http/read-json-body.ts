import type { IncomingMessage } from 'node:http';
import { BubbleError, invalidRequest } from '../errors/bubble-error.js';

/**
 * How deep a body may nest arrays and objects. JSON.parse takes thousands of levels, but every later
 * recursive walk (JSON.stringify of an event's `data`, zod) would overflow the stack on them.
 */
export const MAX_JSON_DEPTH = 100;

/** A lone UTF-16 surrogate: JSON's `\\ud800` escapes make them, and no UTF-8 store keeps them exactly. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What makes a parsed body unfit to store exactly, or null. */
export type JsonProblem = 'too_deep' | 'non_finite_number' | 'lone_surrogate';

/**
 * One walk over a parsed body: does it nest arrays or objects more than `max`
 * levels deep (a bare object is one level), hold a number JSON cannot write
 * back (`1e400` parses as Infinity, which would be stored as null), or a string
 * or key with a lone surrogate? It recurses at most `max + 1` frames, so it
 * cannot overflow itself, and allocates nothing.
 */
export function jsonProblem(value: unknown, max: number): JsonProblem | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'non_finite_number';
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? 'lone_surrogate' : null;
  if (typeof value !== 'object' || value === null) return null;
  if (max === 0) return 'too_deep';
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = jsonProblem(item, max - 1);
      if (problem !== null) return problem;
    }
    return null;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (LONE_SURROGATE.test(key)) return 'lone_surrogate';
    const problem = jsonProblem(record[key], max - 1);
    if (problem !== null) return problem;
  }
  return null;
}

const PROBLEM_MESSAGES: Record<JsonProblem, string> = {
  too_deep: `request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
  non_finite_number: 'request body has a number JSON cannot represent (such as 1e400): send it as a string',
  lone_surrogate: 'request body has a string with a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)',
};

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads and parses a JSON body of at most `limit` bytes (`undefined` when empty). Over the limit it
 * stops reading at once (by Content-Length when declared, else as soon as the
 * count passes the limit) and throws 413; the caller closes the connection
 * after answering.
 */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      fn();
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish(() => reject(tooLarge(limit)));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void =>
      finish(() => {
        let text: string;
        try {
          text = UTF8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
        } catch {
          reject(invalidRequest('request body is not valid UTF-8'));
          return;
        }
        if (text.trim() === '') {
          // No body at all: each route's schema decides whether that is acceptable.
          resolve(undefined);
          return;
        }
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          reject(invalidRequest('request body is not valid JSON'));
          return;
        }
        const problem = jsonProblem(value, MAX_JSON_DEPTH);
        if (problem !== null) {
          reject(
            invalidRequest(
              PROBLEM_MESSAGES[problem],
              problem === 'too_deep' ? { maxDepth: MAX_JSON_DEPTH } : { problem },
            ),
          );
          return;
        }
        resolve(value);
      });
    const onError = (error: Error): void => finish(() => reject(error));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** 413, answered with `Connection: close`: the rest of the body is never read, so the connection cannot be reused. */
function tooLarge(limit: number): BubbleError {
  return new BubbleError(
    'payload_too_large',
    `request body is over the limit of ${limit} bytes`,
    { limit },
    { connection: 'close' },
  );
}
