import type { IncomingMessage } from 'node:http';
import { BubbleError, invalidRequest } from '../errors/bubble-error.js';

/**
 * How deep a body may nest arrays and objects. JSON.parse takes thousands of levels, but every later
 * recursive walk (JSON.stringify of an event's `data`, zod) would overflow the stack on them.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Whether `value` nests arrays or objects more than `max` levels deep (a bare object is one level).
 * It recurses at most `max + 1` frames, so it cannot overflow itself, and allocates nothing.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, max - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (nestsDeeperThan(record[key], max - 1)) return true;
  return false;
}

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
        const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
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
        if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
          reject(invalidRequest(`request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`, { maxDepth: MAX_JSON_DEPTH }));
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
  return new BubbleError('payload_too_large', `request body is over the limit of ${limit} bytes`, { limit }, { connection: 'close' });
}
