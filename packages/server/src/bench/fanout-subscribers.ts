/**
 * Fan-out receivers (a child process of the benchmark): opens N WebSocket
 * clients (a raw minimal client, see raw-ws-client.ts), authenticates and subscribes each, then records, for every event
 * frame, now minus the send time the publisher wrote into the event (the
 * `delta` of a text-delta chunk). Clocks: `performance.timeOrigin + now()`,
 * the same wall clock in every process on this machine.
 *
 * Protocol: parent sends a `FanoutJob`, child answers `{ready: true}` once
 * every client is subscribed; `'reset'` drops what was recorded so far (after
 * a warm-up) and is answered `{reset: true}`; `'report'` is answered with a
 * `FanoutResult` and starts the record again (the sockets stay, for the next round);
 * `'progress'` is answered `{received}`, the event frames counted so far over all clients;
 * `'stop'` is answered with a `FanoutResult`, then the child exits.
 */
import { wallClockMs } from './bench-clock.js';
import { quantile } from './bench-report.js';
import { RawWsClient } from './raw-ws-client.js';

export interface FanoutJob {
  wsUrl: string;
  clients: number;
  /** Bubble mode: authenticate with this token and subscribe to the thread. Baseline mode when absent. */
  bubble?: { token: string; threadId: string; afterSeq: number };
  /** Also answer every latency measured (`FanoutResult.samples`), to pool several receivers' percentiles. */
  samples?: boolean;
  /**
   * Bubble: client `g` (its index over all receiver processes, `first + i`) subscribes to
   * `threads[g % threads.length]` instead of `bubble.threadId`, authenticated with
   * `tokens[g % tokens.length]` when given (else `bubble.token`).
   */
  threads?: Array<{ threadId: string; afterSeq: number }>;
  tokens?: string[];
  /** Baseline: client `g` joins topic `g % topics` (the baseline server sends a topic's frames to its sockets only). */
  topics?: number;
  /** This process's first client's index over all receiver processes (spreads threads, topics and addresses). Default 0. */
  first?: number;
  /**
   * Time the frames of every n-th client only (by `g`); the others count theirs. Every frame is
   * still read off every socket; only the parsing of its send time is skipped. Default 1 (all).
   */
  measureEvery?: number;
  /** Clients opened at once while connecting. Default 10. */
  openAtOnce?: number;
}

export interface FanoutResult {
  received: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p99: number;
  max: number;
  /** Fewest events any one client received (every client should see every event). */
  minPerClient: number;
  maxPerClient: number;
  unexpectedCloses: number;
  /** Receipt minus the event's `createdAt` (set by the server as it appends; ms resolution): the server-side share. */
  fromCreatedAtP50: number;
  fromCreatedAtP99: number;
  /** Every latency, in ms, when the job asked for them. */
  samples?: number[];
}

const DELTA_MARK = Buffer.from('"delta":"');
const CREATED_MARK = Buffer.from('"createdAt":"');

async function run(job: FanoutJob): Promise<void> {
  const latencies: number[] = [];
  const fromCreatedAt: number[] = [];
  const perClient = new Array<number>(job.clients).fill(0);
  let unexpectedCloses = 0;
  let stopping = false;
  const sockets: RawWsClient[] = [];

  const first = job.first ?? 0;
  const measureEvery = job.measureEvery ?? 1;
  const openOne = (index: number): Promise<void> =>
    new Promise((resolve, reject) => {
      let ready = false;
      const g = first + index;
      const timed = g % measureEvery === 0;
      const thread = job.threads?.[g % job.threads.length] ?? job.bubble;
      const token = job.tokens?.[g % job.tokens.length] ?? job.bubble?.token ?? 'baseline';
      const auth =
        job.topics === undefined
          ? { type: 'client.auth', token }
          : { type: 'client.auth', token, topic: String(g % job.topics) };
      const client: RawWsClient = new RawWsClient(
        job.wsUrl,
        {
          onOpen: () => client.sendText(JSON.stringify(auth)),
          onText: (data) => {
            if (ready) {
              const at = data.indexOf(DELTA_MARK);
              if (at < 0) return;
              const sentAt = Number.parseFloat(
                data.toString('latin1', at + DELTA_MARK.length, at + DELTA_MARK.length + 24),
              );
              if (Number.isFinite(sentAt)) {
                const now = wallClockMs();
                latencies.push(now - sentAt);
                const created = data.indexOf(CREATED_MARK);
                if (created >= 0) {
                  const createdAt = Date.parse(
                    data.toString('latin1', created + CREATED_MARK.length, created + CREATED_MARK.length + 24),
                  );
                  if (Number.isFinite(createdAt)) fromCreatedAt.push(now - createdAt);
                }
                perClient[index] = (perClient[index] ?? 0) + 1;
              }
              return;
            }
            const frame = JSON.parse(data.toString('utf8')) as { type: string };
            if (thread === undefined && frame.type === 'ready') {
              ready = true;
              client.countEventsOnly = !timed;
              resolve();
            } else if (thread !== undefined && frame.type === 'server.ready') {
              client.sendText(
                JSON.stringify({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: thread.afterSeq }),
              );
            } else if (frame.type === 'subscribed') {
              ready = true;
              client.countEventsOnly = !timed;
              resolve();
            } else if (frame.type === 'error') {
              reject(new Error(`subscribe refused: ${data.toString('utf8')}`));
            }
          },
          onClose: (code) => {
            if (stopping) return;
            unexpectedCloses += 1;
            if (!ready) reject(new Error(`socket closed with ${code} before it was ready`));
          },
          // Spread over loopback addresses as separate clients would be: the server caps connections per address,
          // and the publisher's up to 256 keep-alive sockets come from 127.0.0.1.
        },
        `127.0.0.${2 + (g % 200)}`,
      );
      sockets[index] = client;
    });

  const atOnce = job.openAtOnce ?? 10;
  for (let i = 0; i < job.clients; i += atOnce) {
    await Promise.all(Array.from({ length: Math.min(atOnce, job.clients - i) }, (_, k) => openOne(i + k)));
  }
  process.send?.({ ready: true });
  /** Events each client got: timed ones counted here, the others by their socket. */
  const counts = (): number[] => perClient.map((n, i) => n + (sockets[i]?.events ?? 0));
  const reset = (): void => {
    latencies.length = 0;
    fromCreatedAt.length = 0;
    perClient.fill(0);
    for (const socket of sockets) socket.events = 0;
  };
  const report = (): FanoutResult => {
    const sorted = Float64Array.from(latencies).sort();
    const created = Float64Array.from(fromCreatedAt).sort();
    const result: FanoutResult = {
      received: sorted.length,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      max: quantile(sorted, 1),
      minPerClient: counts().reduce((min, n) => Math.min(min, n), Number.POSITIVE_INFINITY),
      maxPerClient: counts().reduce((max, n) => Math.max(max, n), 0),
      unexpectedCloses,
      fromCreatedAtP50: quantile(created, 0.5),
      fromCreatedAtP99: quantile(created, 0.99),
    };
    if (job.samples === true) result.samples = [...latencies];
    return result;
  };
  process.on('message', (command: string) => {
    if (command === 'reset') {
      reset();
      process.send?.({ reset: true });
      return;
    }
    if (command === 'progress') {
      process.send?.({ received: counts().reduce((sum, n) => sum + n, 0) });
      return;
    }
    if (command === 'report') {
      process.send?.(report());
      reset();
      return;
    }
    stopping = true;
    for (const socket of sockets) socket.destroy();
    process.send?.(report(), () => process.exit(0));
  });
}

if (process.send !== undefined) {
  process.once('message', (job: FanoutJob) => {
    run(job).catch((error: unknown) => {
      process.send?.({ error: String(error) }, () => process.exit(1));
    });
  });
}
