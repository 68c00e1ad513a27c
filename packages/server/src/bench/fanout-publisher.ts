/**
 * Offered-rate publisher (a child process of the benchmark): sends one event
 * per request at a fixed rate, each carrying its send time, over keep-alive
 * HTTP. Open loop: the schedule does not wait for answers, so a slow server
 * shows up as latency, not as a lower rate. Up to 256 requests in flight, so
 * the client's connection pool is not what queues them; with several senders
 * (Bubble's bench humans) each has its own pool and loopback address.
 */
import { Agent, request } from 'node:http';
import { wallClockMs } from './bench-clock.js';
import { quantile } from './bench-report.js';

export interface PublishJob {
  /** Full URL to POST to. */
  url: string;
  /** Or several, in turn (one event each): events spread over threads (Bubble) or topics (baseline). */
  urls?: string[];
  /** Bubble appends need a bearer (one per request in turn); the baseline takes none. */
  tokens?: string[];
  /** `bubble`: the body is an event to append; `baseline`: the body is the frame to broadcast. */
  mode: 'bubble' | 'baseline';
  ratePerSecond: number;
  durationMs: number;
}

export interface PublishResult {
  sent: number;
  ok: number;
  /** From the send time written into the event to the whole answer, ms: what the append itself took, queueing included. */
  answeredP50: number;
  answeredP99: number;
  failed: number;
  firstFailure: string | null;
}

function body(mode: PublishJob['mode'], sentAt: number, sender: number): string {
  const chunk = { type: 'text-delta', id: 't1', delta: sentAt.toFixed(3) };
  // A run belongs to the first principal that uses it: one per sender.
  if (mode === 'bubble') return JSON.stringify({ type: 'message_part', data: { runId: `fanout-${sender}`, chunk } });
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

/** Sockets in flight at most, over all senders. */
const MAX_SOCKETS = 256;

export function publish(job: PublishJob): Promise<PublishResult> {
  // One client per sender, each from its own loopback address as separate people's would be (the server caps
  // connections per address); the baseline's one sender gets them all.
  const senders = job.tokens?.length ?? 1;
  const agents = Array.from(
    { length: senders },
    (_, i) =>
      new Agent({
        keepAlive: true,
        maxSockets: Math.ceil(MAX_SOCKETS / senders),
        ...(senders > 1 ? { localAddress: `127.0.1.${1 + (i % 250)}` } : {}),
      }),
  );
  const targets = (job.urls ?? [job.url]).map((url) => new URL(url));
  const result: PublishResult = { sent: 0, ok: 0, failed: 0, firstFailure: null, answeredP50: 0, answeredP99: 0 };
  const answerTimes: number[] = [];
  const total = Math.floor((job.ratePerSecond * job.durationMs) / 1000);
  const start = performance.now();
  let answered = 0;
  return new Promise((resolve) => {
    const sendOne = (): void => {
      const sender = result.sent % senders;
      const target = targets[result.sent % targets.length] as URL;
      const agent = agents[sender] as Agent;
      const sentAt = wallClockMs();
      const text = body(job.mode, sentAt, sender);
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      };
      if (job.tokens !== undefined) headers.authorization = `Bearer ${job.tokens[sender]}`;
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          headers,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          let said = '';
          if (ok) res.resume();
          else res.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
          res.on('end', () => {
            answerTimes.push(wallClockMs() - sentAt);
            if (ok) result.ok += 1;
            else {
              result.failed += 1;
              result.firstFailure ??= `${status} ${said.slice(0, 300)}`;
            }
            done();
          });
        },
      );
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
        for (const agent of agents) agent.destroy();
        const sorted = Float64Array.from(answerTimes).sort();
        result.answeredP50 = quantile(sorted, 0.5);
        result.answeredP99 = quantile(sorted, 0.99);
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
