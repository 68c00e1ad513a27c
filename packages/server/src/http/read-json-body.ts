import type { IncomingMessage } from 'node:http';
import { describeJsonProblem, jsonProblem, MAX_JSON_DEPTH } from '../domain/text-rules.js';
import { BubbleError, invalidRequest } from '../errors/bubble-error.js';

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
        const found = jsonProblem(value, MAX_JSON_DEPTH);
        if (found !== null) {
          const { message, details } = describeJsonProblem(found, 'request body');
          reject(invalidRequest(message, details));
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
