/**
 * Read latency (a child process of the benchmark): one keep-alive raw socket per target, one GET
 * at a time (closed loop, nothing else in flight), each timed from the write of the request to
 * the last byte of its answer. The targets take turns, a block of requests each, in an order
 * that alternates every turn, so the machine's drift falls on all of them alike.
 *
 * Protocol: parent sends a `GetLatencyJob`, child answers with a `GetLatencyResult`, then exits.
 */
import { connect, type Socket } from 'node:net';
import { quantile } from './bench-report.js';

export interface GetTarget {
  name: string;
  host: string;
  port: number;
  path: string;
  /** Bearer token; none for a baseline. */
  token?: string;
}

export interface GetLatencyJob {
  targets: GetTarget[];
  /** Untimed requests per target first (the JIT, the page cache, the statement caches). */
  warmup: number;
  turns: number;
  /** Requests per target per turn. */
  perTurn: number;
}

export interface GetLatency {
  count: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  max: number;
  /** Bytes of the last answer's body (the same page every time). */
  bodyBytes: number;
}

export type GetLatencyResult = Record<string, GetLatency>;

class KeepAliveGet {
  readonly #socket: Socket;
  readonly #request: Buffer;
  #pending: Buffer = Buffer.alloc(0);
  #waiter: { resolve: (bodyBytes: number) => void; reject: (error: Error) => void } | null = null;

  constructor(target: GetTarget) {
    this.#request = Buffer.from(
      `GET ${target.path} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\n` +
        (target.token === undefined ? '' : `Authorization: Bearer ${target.token}\r\n`) +
        'Connection: keep-alive\r\n\r\n',
    );
    this.#socket = connect({ host: target.host, port: target.port });
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.#socket.on('error', (error) => this.#fail(error));
    this.#socket.on('close', () => this.#fail(new Error(`${target.name}: connection closed`)));
  }

  /** One GET; resolves with the body's size once the whole answer is in. */
  get(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
      this.#socket.write(this.#request);
    });
  }

  close(): void {
    this.#waiter = null;
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const headerEnd = this.#pending.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const head = this.#pending.subarray(0, headerEnd).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.#pending.length < headerEnd + 4 + length) return;
    const body = this.#pending.subarray(headerEnd + 4, headerEnd + 4 + length);
    this.#pending = this.#pending.subarray(headerEnd + 4 + length);
    const waiter = this.#waiter;
    this.#waiter = null;
    const status = Number(head.slice(9, 12));
    if (status !== 200) waiter?.reject(new Error(`answered ${head.split('\r\n', 1)[0]}: ${body.toString('utf8')}`));
    else waiter?.resolve(length);
  }

  #fail(error: Error): void {
    const waiter = this.#waiter;
    this.#waiter = null;
    waiter?.reject(error);
  }
}

export async function measureGets(job: GetLatencyJob): Promise<GetLatencyResult> {
  const clients = job.targets.map((target) => new KeepAliveGet(target));
  const samples = job.targets.map(() => [] as number[]);
  const bodyBytes = job.targets.map(() => 0);
  try {
    for (const client of clients) for (let i = 0; i < job.warmup; i += 1) await client.get();
    for (let turn = 0; turn < job.turns; turn += 1) {
      const order = job.targets.map((_, i) => i);
      if (turn % 2 === 1) order.reverse();
      for (const index of order) {
        const client = clients[index] as KeepAliveGet;
        for (let i = 0; i < job.perTurn; i += 1) {
          const startedAt = performance.now();
          bodyBytes[index] = await client.get();
          (samples[index] as number[]).push(performance.now() - startedAt);
        }
      }
    }
  } finally {
    for (const client of clients) client.close();
  }
  const result: GetLatencyResult = {};
  job.targets.forEach((target, i) => {
    const sorted = Float64Array.from(samples[i] as number[]).sort();
    result[target.name] = {
      count: sorted.length,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      max: quantile(sorted, 1),
      bodyBytes: bodyBytes[i] as number,
    };
  });
  return result;
}

if (process.send !== undefined) {
  process.once('message', (job: GetLatencyJob) => {
    measureGets(job).then(
      (result) => process.send?.(result, () => process.exit(0)),
      (error: unknown) => process.send?.({ error: String(error) }, () => process.exit(1)),
    );
  });
}
