/**
 * A small closed-loop HTTP/1.1 load generator on raw keep-alive sockets (a
 * child process of the benchmark). Each connection sends one prebuilt POST,
 * waits for the whole answer, and sends the next: no pipelining, so every
 * request is one durable append the server acknowledged.
 *
 * Started with fork(); receives its job as a message, answers with a result.
 */
import { connect, type Socket } from 'node:net';

export interface LoadJob {
  host: string;
  port: number;
  /** One request path per connection, round-robin (spreads connections over threads). */
  paths: string[];
  /** Bearer tokens, one per request in turn on each connection (each connection starts at its own offset). */
  tokens: string[];
  /** The body sent with each token (`bodies[i % bodies.length]` with `tokens[i]`): a run belongs to one principal, so each needs its own runId. */
  bodies: string[];
  connections: number;
  warmupMs: number;
  durationMs: number;
}

export interface LoadResult {
  /** 2xx answers completed inside the measured window. */
  ok: number;
  /** Non-2xx answers inside the measured window. */
  failed: number;
  /** First non-2xx status line seen, for diagnosis. */
  firstFailure: string | null;
  socketErrors: number;
  measuredMs: number;
  /** Every answer, warm-up included (what the server's CPU time over the whole load is divided by). */
  answered: number;
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const result: LoadResult = {
    ok: 0,
    failed: 0,
    firstFailure: null,
    socketErrors: 0,
    measuredMs: job.durationMs,
    answered: 0,
  };
  const start = performance.now();
  const measureFrom = start + job.warmupMs;
  const stopAt = measureFrom + job.durationMs;
  // Prebuilt: requests[path][token].
  const requests = job.paths.map((path) =>
    job.tokens.map((token, i) => {
      const body = Buffer.from(job.bodies[i % job.bodies.length] as string);
      return Buffer.concat([
        Buffer.from(
          `POST ${path} HTTP/1.1\r\nHost: ${job.host}:${job.port}\r\nAuthorization: Bearer ${token}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n`,
        ),
        body,
      ]);
    }),
  );
  const runs: Promise<void>[] = [];
  for (let i = 0; i < job.connections; i += 1) {
    runs.push(runConnection(job, requests[i % requests.length] as Buffer[], i, measureFrom, stopAt, result));
  }
  await Promise.all(runs);
  return result;
}

function runConnection(
  job: LoadJob,
  requests: Buffer[],
  offset: number,
  measureFrom: number,
  stopAt: number,
  result: LoadResult,
): Promise<void> {
  let next = offset;
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: job.host, port: job.port });
    socket.setNoDelay(true);
    let pending: Buffer = Buffer.alloc(0);
    const send = (): void => {
      if (performance.now() >= stopAt) {
        socket.end();
        resolve();
        return;
      }
      socket.write(requests[next++ % requests.length] as Buffer);
    };
    socket.on('connect', send);
    socket.on('error', () => {
      result.socketErrors += 1;
      resolve();
    });
    socket.on('close', () => resolve());
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const headerEnd = pending.indexOf('\r\n\r\n');
        if (headerEnd < 0) return;
        const head = pending.subarray(0, headerEnd).toString('latin1');
        const match = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        const length = match ? Number(match[1]) : 0;
        const total = headerEnd + 4 + length;
        if (pending.length < total) return;
        pending = pending.subarray(total);
        const status = Number(head.slice(9, 12));
        const now = performance.now();
        result.answered += 1;
        if (now >= measureFrom && now < stopAt) {
          if (status >= 200 && status < 300) result.ok += 1;
          else {
            result.failed += 1;
            result.firstFailure ??= head.split('\r\n', 1)[0] ?? null;
          }
        }
        send();
      }
    });
  });
}

if (process.send !== undefined) {
  process.once('message', (job: LoadJob) => {
    void runLoad(job).then((result) => {
      process.send?.(result, () => process.exit(0));
    });
  });
}
