/**
 * Offered-rate publisher (a child process of the benchmark): sends one event
 * per request at a fixed rate, each carrying its send time, over keep-alive
 * HTTP. Open loop: the schedule does not wait for answers, so a slow server
 * shows up as latency, not as a lower rate. Up to 256 requests in flight, so
 * the client's connection pool is not what queues them.
 */
import { Agent, request } from 'node:http';
import { wallClockMs } from './bench-clock.js';

export interface PublishJob {
  /** Full URL to POST to. */
  url: string;
  /** Bubble appends need a bearer; the baseline takes none. */
  token?: string;
  /** `bubble`: the body is an event to append; `baseline`: the body is the frame to broadcast. */
  mode: 'bubble' | 'baseline';
  ratePerSecond: number;
  durationMs: number;
}

export interface PublishResult {
  sent: number;
  ok: number;
  failed: number;
  firstFailure: string | null;
}

function body(mode: PublishJob['mode'], sentAt: number): string {
  const chunk = { type: 'text-delta', id: 't1', delta: sentAt.toFixed(3) };
  if (mode === 'bubble') return JSON.stringify({ type: 'message_part', data: { runId: 'fanout', chunk } });
  // Same shape and size as the frame Bubble sends, so both sides move the same bytes.
  return JSON.stringify({
    type: 'event',
    id: 's',
    event: {
      id: 'ev_0123456789abcdef01234567',
      threadId: 'th_baseline0000',
      seq: 1,
      type: 'message_part',
      principalId: 'bench',
      data: { runId: 'fanout', chunk },
      clientEventId: null,
      createdAt: new Date().toISOString(),
    },
  });
}

export function publish(job: PublishJob): Promise<PublishResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(job.url);
  const result: PublishResult = { sent: 0, ok: 0, failed: 0, firstFailure: null };
  const total = Math.floor((job.ratePerSecond * job.durationMs) / 1000);
  const start = performance.now();
  let answered = 0;
  return new Promise((resolve) => {
    const sendOne = (): void => {
      const text = body(job.mode, wallClockMs());
      const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
      if (job.token !== undefined) headers.authorization = `Bearer ${job.token}`;
      const req = request({ agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers }, (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) result.ok += 1;
          else {
            result.failed += 1;
            result.firstFailure ??= String(status);
          }
          done();
        });
      });
      req.on('error', (error) => {
        result.failed += 1;
        result.firstFailure ??= error.message;
        done();
      });
      req.end(text);
      result.sent += 1;
    };
    const done = (): void => {
      answered += 1;
      if (answered === total) {
        agent.destroy();
        resolve(result);
      }
    };
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * job.ratePerSecond) / 1000));
      while (result.sent < due) sendOne();
      if (result.sent < total) setTimeout(tick, 1);
    };
    tick();
  });
}

if (process.send !== undefined) {
  process.once('message', (job: PublishJob) => {
    void publish(job).then((result) => process.send?.(result, () => process.exit(0)));
  });
}
