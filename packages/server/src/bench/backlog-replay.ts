/**
 * Backlog replay (a child process of the benchmark): one WebSocket (the raw client of
 * raw-ws-client.ts) subscribes to a thread from `afterSeq` and reads until it holds `expected`
 * events, checking that their seqs come one after another with no gap and no duplicate. The time
 * runs from the `subscribe` frame's write to the last event's arrival.
 *
 * Protocol: parent sends a `ReplayJob`, child answers with a `ReplayResult`, then exits.
 */
import { RawWsClient } from './raw-ws-client.js';

export interface ReplayJob {
  wsUrl: string;
  /** Bubble: authenticate with it (`server.ready`); baseline when absent (`ready`). */
  token?: string;
  threadId: string;
  afterSeq: number;
  /** Events to wait for: the head minus `afterSeq`. */
  expected: number;
  timeoutMs: number;
}

export interface ReplayResult {
  events: number;
  /** From the subscribe frame's write to the first event / to the last one, ms. */
  firstEventMs: number;
  totalMs: number;
  eventsPerSecond: number;
  /** Every seq was the one before plus 1. */
  inOrder: boolean;
  /** Bytes of event frames received. */
  bytes: number;
}

const EVENT_MARK = Buffer.from('{"type":"event"');
const SEQ_MARK = Buffer.from('"seq":');

function replay(job: ReplayJob): Promise<ReplayResult> {
  return new Promise((resolve, reject) => {
    let subscribedAt = 0;
    let firstAt = 0;
    let events = 0;
    let bytes = 0;
    let lastSeq = job.afterSeq;
    let inOrder = true;
    let done = false;
    const timer = setTimeout(
      () => finish(new Error(`only ${events} of ${job.expected} events in ${job.timeoutMs} ms`)),
      job.timeoutMs,
    );
    const finish = (error?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      client.destroy();
      if (error !== undefined) {
        reject(error);
        return;
      }
      const totalMs = performance.now() - subscribedAt;
      resolve({
        events,
        firstEventMs: firstAt - subscribedAt,
        totalMs,
        eventsPerSecond: (events / totalMs) * 1000,
        inOrder,
        bytes,
      });
    };
    const subscribe = (): void => {
      subscribedAt = performance.now();
      client.sendText(JSON.stringify({ type: 'subscribe', id: 's', threadId: job.threadId, afterSeq: job.afterSeq }));
    };
    const client: RawWsClient = new RawWsClient(job.wsUrl, {
      onOpen: () => client.sendText(JSON.stringify({ type: 'client.auth', token: job.token ?? 'baseline' })),
      onText: (data) => {
        if (data.subarray(0, EVENT_MARK.length).equals(EVENT_MARK)) {
          if (events === 0) firstAt = performance.now();
          events += 1;
          bytes += data.length;
          const at = data.indexOf(SEQ_MARK);
          const seq = Number.parseInt(data.toString('latin1', at + SEQ_MARK.length, at + SEQ_MARK.length + 16), 10);
          if (seq !== lastSeq + 1) inOrder = false;
          lastSeq = seq;
          if (events >= job.expected) finish();
          return;
        }
        const frame = JSON.parse(data.toString('utf8')) as { type: string };
        if (frame.type === 'server.ready' || frame.type === 'ready') subscribe();
        else if (frame.type === 'error') finish(new Error(`refused: ${data.toString('utf8')}`));
      },
      onClose: (code) => finish(new Error(`socket closed with ${code} after ${events} events`)),
    });
  });
}

if (process.send !== undefined) {
  process.once('message', (job: ReplayJob) => {
    replay(job).then(
      (result) => process.send?.(result, () => process.exit(0)),
      (error: unknown) => process.send?.({ error: String(error) }, () => process.exit(1)),
    );
  });
}
