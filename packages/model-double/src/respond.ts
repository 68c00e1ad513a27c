import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SseEvent } from './reply-plan.js';

/**
 * The I/O edge: writes JSON bodies and SSE streams to a response, honouring
 * per-event delays and stopping as soon as the client goes away.
 */

export type Completion = 'completed' | 'aborted';

export function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): Promise<Completion> {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  return finish(res, text);
}

export async function writeSse(
  res: ServerResponse,
  events: readonly SseEvent[],
  headers: Record<string, string>,
): Promise<Completion> {
  const gone = clientGone(res);
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
  });
  res.flushHeaders();
  for (const e of events) {
    if (e.delayMs > 0) {
      try {
        await sleep(e.delayMs, undefined, { signal: gone.signal });
      } catch {
        return 'aborted';
      }
    }
    if (gone.signal.aborted) return 'aborted';
    res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
  }
  if (gone.signal.aborted) return 'aborted';
  return finish(res);
}

/** Waits for `ms`, or until the client goes away (then resolves false). */
export async function waitUnlessGone(res: ServerResponse, ms: number): Promise<boolean> {
  if (ms <= 0) return !res.destroyed;
  const gone = clientGone(res);
  try {
    await sleep(ms, undefined, { signal: gone.signal });
    return true;
  } catch {
    return false;
  }
}

/** An AbortSignal that fires when the connection closes before the response ended. */
function clientGone(res: ServerResponse): AbortController {
  const controller = new AbortController();
  if (res.destroyed) {
    controller.abort();
    return controller;
  }
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller;
}

function finish(res: ServerResponse, text?: string): Promise<Completion> {
  return new Promise((resolve) => {
    if (res.destroyed) {
      resolve('aborted');
      return;
    }
    res.once('finish', () => resolve('completed'));
    res.once('close', () => resolve(res.writableFinished ? 'completed' : 'aborted'));
    res.end(text);
  });
}
