import WebSocket from 'ws';
import { UNKNOWN_BATCH_ERROR } from './old-server-answers.js';
import { listenForRelay, type WsRelayListener } from './ws-relay-listener.js';

/** What an upstream answer with no id (a `pong`, or an `error` without `id`) answers, in the order sent. */
type Awaiting = 'client-ping' | 'batch' | 'drain';

/**
 * A server from before `subscribe_batch`, played by a loopback relay in front of the real server's
 * `/v1/ws`: every frame but `subscribe_batch` passes through unchanged, so sign-in, subscribes,
 * events, the frame rate limit and its 4008 are the real server's. A `subscribe_batch` is
 * handled as such a server handled a frame type it did not know: it takes one frame of the
 * principal's budget (the relay sends a `ping` upstream in its place, so the real limiter decides),
 * and is answered either with the limiter's own `rate_limited` error (no id: the frame has none)
 * or, once admitted, as an unknown frame type (`invalid_request`, no id, `details: {type}`).
 *
 * The real server answers each `ping`, admitted or refused, at once and in order, so the relay
 * pairs those answers with what it sent in order.
 */
export class OldServerProxy {
  /** `subscribe_batch` frames the clients sent. */
  batches = 0;
  /** `subscribe_batch` frames refused by the frame limit (answered `rate_limited` without id). */
  batchesRefused = 0;
  /** Plain `subscribe` frames the clients sent. */
  subscribes = 0;
  /** Client sockets opened on the relay. */
  connections = 0;
  /** Close codes the server gave the clients' sockets, in order. */
  readonly closeCodes: number[] = [];
  /**
   * When set, the next `subscribe_batch` is sent upstream right after as many pings as empty the
   * principal's frame budget (whose burst this is), so the limiter refuses it, deterministically:
   * refilling one frame takes far longer than the server takes to read the next.
   */
  drainBeforeNextBatch: number | null = null;
  readonly #pairs = new Set<{ client: WebSocket; upstream: WebSocket }>();
  #listener: WsRelayListener | null = null;

  private constructor() {}

  get wsUrl(): string {
    return (this.#listener as WsRelayListener).wsUrl;
  }

  static async start(upstreamWsUrl: string): Promise<OldServerProxy> {
    const proxy = new OldServerProxy();
    proxy.#listener = await listenForRelay((client) => proxy.#relay(client, new WebSocket(upstreamWsUrl)));
    return proxy;
  }

  #relay(client: WebSocket, upstream: WebSocket): void {
    this.connections += 1;
    const pair = { client, upstream };
    this.#pairs.add(pair);
    const awaiting: Awaiting[] = [];
    const early: string[] = [];
    const toUpstream = (text: string) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      else early.push(text);
    };
    const ping = JSON.stringify({ type: 'ping' });
    client.on('message', (data) => {
      const text = data.toString();
      const type = typeOf(text);
      if (type === 'subscribe_batch') {
        this.batches += 1;
        const drain = this.drainBeforeNextBatch;
        this.drainBeforeNextBatch = null;
        for (let i = 0; drain !== null && i <= drain; i += 1) {
          awaiting.push('drain');
          toUpstream(ping);
        }
        awaiting.push('batch');
        toUpstream(ping);
        return;
      }
      if (type === 'subscribe') this.subscribes += 1;
      if (type === 'ping') awaiting.push('client-ping');
      toUpstream(text);
    });
    upstream.on('open', () => {
      for (const text of early.splice(0)) upstream.send(text);
    });
    upstream.on('message', (data) => {
      const text = data.toString();
      const answer = idlessAnswer(text);
      const what = answer === null ? undefined : awaiting.shift();
      if (what === 'drain') return;
      if (what === 'batch' && answer === 'refused') this.batchesRefused += 1;
      if (what === 'batch' && answer === 'pong') {
        if (client.readyState === WebSocket.OPEN) client.send(UNKNOWN_BATCH_FRAME);
        return;
      }
      if (client.readyState === WebSocket.OPEN) client.send(text);
    });
    const end = (code: number, reason: string) => {
      if (!this.#pairs.delete(pair)) return;
      this.closeCodes.push(code);
      if (client.readyState === WebSocket.OPEN) client.close(code, reason);
      upstream.terminate();
    };
    upstream.on('close', (code, reason) => end(code >= 4000 ? code : 1011, reason.toString()));
    upstream.on('error', () => end(1011, 'upstream error'));
    client.on('close', () => {
      this.#pairs.delete(pair);
      upstream.terminate();
    });
  }

  async stop(): Promise<void> {
    for (const { client, upstream } of [...this.#pairs]) {
      client.terminate();
      upstream.terminate();
    }
    this.#pairs.clear();
    await this.#listener?.close();
  }
}

const UNKNOWN_BATCH_FRAME = JSON.stringify(UNKNOWN_BATCH_ERROR);

function typeOf(text: string): unknown {
  try {
    return (JSON.parse(text) as { type?: unknown }).type;
  } catch {
    return undefined;
  }
}

/** Whether an upstream frame is the answer to a ping: a `pong`, or a `rate_limited` error with no id. */
function idlessAnswer(text: string): 'pong' | 'refused' | null {
  try {
    const frame = JSON.parse(text) as { type?: unknown; id?: unknown; error?: { code?: unknown } };
    if (frame.type === 'pong') return 'pong';
    if (frame.type === 'error' && frame.id === undefined && frame.error?.code === 'rate_limited') return 'refused';
  } catch {
    // not JSON: not an answer
  }
  return null;
}
