import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BubbleClient } from '../src/index.js';

/**
 * How a client paces itself (issue 19): a cap on requests on the wire at once, and one pause for
 * all of them when the server says `rate_limited`. Against a plain HTTP server that records
 * when each request arrived, so what is measured is what reached the wire.
 */
let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const thread = (id: string) => ({
  thread: {
    threadId: id,
    parentThreadId: null,
    title: null,
    createdBy: 'alice',
    createdAt: new Date().toISOString(),
    headSeq: 1,
  },
});

/** The server's answer over its budget: 429 `rate_limited` with `Retry-After`. */
function tooMany(res: ServerResponse, retryAfterSeconds: number): void {
  res
    .writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfterSeconds) })
    .end(JSON.stringify({ error: { code: 'rate_limited', message: 'too many requests' } }));
}

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handle);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

describe('a client pacing its requests', () => {
  it('keeps at most maxConcurrentRequests on the wire, and sends the rest in order as they end', async () => {
    let open = 0;
    let most = 0;
    let ended = 0;
    /** For each request, how many had been answered when it arrived. */
    const endedBefore = new Map<string, number>();
    const url = await serve((req, res) => {
      open += 1;
      most = Math.max(most, open);
      endedBefore.set(req.url!, ended);
      setTimeout(() => {
        open -= 1;
        ended += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(thread('th_x')));
      }, 30);
    });
    const client = new BubbleClient({ url, token: 't', maxConcurrentRequests: 3 });
    const ids = Array.from({ length: 12 }, (_, i) => `th_${i}`);
    await Promise.all(ids.map((id) => client.getThread(id)));
    expect(most).toBe(3);
    // In order: request i waits for the slot of request i - 3 (a later one never jumps the queue). Two
    // requests sent one right after the other on two connections may arrive either way round, so the
    // order of arrival itself is not what is compared.
    expect(endedBefore.size).toBe(ids.length);
    const early = ids.filter((id, i) => endedBefore.get(`/v1/threads/${id}`)! < i - 2);
    expect(early).toEqual([]);

    // Without the option, nothing waits.
    most = 0;
    const free = new BubbleClient({ url, token: 't' });
    await Promise.all(ids.map((id) => free.getThread(id)));
    expect(most).toBe(12);
  });

  it('holds every request back for the Retry-After of a rate_limited answer, then sends each once', async () => {
    const arrivals: Array<{ path: string; at: number }> = [];
    let refused = false;
    const url = await serve((req, res) => {
      arrivals.push({ path: req.url!, at: Date.now() });
      if (!refused) {
        refused = true;
        tooMany(res, 1);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(thread('th_x')));
    });
    const client = new BubbleClient({ url, token: 't', retry: { baseMs: 10, capMs: 20 } });
    const first = client.getThread('th_first');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Sent after the refusal: it waits out the same pause instead of drawing another refusal.
    const later = client.getThread('th_later');
    await Promise.all([first, later]);
    const refusedAt = arrivals[0]!.at;
    const after = arrivals.slice(1);
    expect(after.map((a) => a.path).sort()).toEqual(['/v1/threads/th_first', '/v1/threads/th_later']);
    for (const a of after) expect(a.at - refusedAt).toBeGreaterThanOrEqual(950);
  });

  it('holds back the requests waiting for a slot too, when the one on the wire is told rate_limited', async () => {
    const arrivals: Array<{ path: string; at: number }> = [];
    let refused = false;
    const url = await serve((req, res) => {
      arrivals.push({ path: req.url!, at: Date.now() });
      if (!refused) {
        refused = true;
        setTimeout(() => tooMany(res, 1), 30);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(thread('th_x')));
    });
    const client = new BubbleClient({ url, token: 't', maxConcurrentRequests: 1, retry: { baseMs: 10, capMs: 20 } });
    // The first takes the one slot and is refused; the other four wait in line behind it.
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => client.getThread(`th_${id}`)));
    const refusedAt = arrivals[0]!.at;
    expect(arrivals).toHaveLength(6);
    for (const a of arrivals.slice(1)) expect(a.at - refusedAt).toBeGreaterThanOrEqual(950);
  });

  it('keeps retrying while the server stays over its limit, past the usual number of attempts', async () => {
    let refusals = 0;
    const url = await serve((_req, res) => {
      if (refusals < 5) {
        refusals += 1;
        tooMany(res, 0);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(thread('th_x')));
    });
    const client = new BubbleClient({ url, token: 't', retry: { attempts: 4, baseMs: 5, capMs: 10 } });
    await expect(client.getThread('th_x')).resolves.toMatchObject({ threadId: 'th_x' });
    expect(refusals).toBe(5);
  });
});
