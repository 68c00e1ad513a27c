/**
 * A WebSocket test client for the server's own tests (and anyone checking the
 * wire contract): frames are queued as they arrive and taken in order, so a
 * test can assert exactly what the server sent and in which order.
 * Not part of the library's exports.
 */
import WebSocket from 'ws';

export type Frame = { type: string; id?: string; [key: string]: unknown };

export interface CloseInfo {
  code: number;
  reason: string;
}

export class TestSocket {
  readonly #queue: Frame[] = [];
  #waiter: { predicate: (frame: Frame) => boolean; resolve: (frame: Frame) => void } | null = null;
  readonly closed: Promise<CloseInfo>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const frame = JSON.parse(isBinary ? '{"type":"<binary>"}' : data.toString('utf8')) as Frame;
      this.#queue.push(frame);
      this.#deliver();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
    });
    ws.on('error', () => {});
  }

  /** `options`: e.g. `localAddress` (another 127.x.y.z stands for another client) and `headers`. */
  static open(
    url: string,
    options: Pick<WebSocket.ClientOptions, 'localAddress' | 'headers'> = {},
  ): Promise<TestSocket> {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    const socket = new TestSocket(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(socket));
      ws.once('error', reject);
    });
  }

  /** Opens a socket and authenticates it; resolves with the `server.ready` frame. */
  static async authenticated(url: string, token: string): Promise<{ socket: TestSocket; ready: Frame }> {
    const socket = await TestSocket.open(url);
    socket.send({ type: 'client.auth', token });
    const ready = await socket.next();
    if (ready.type !== 'server.ready') throw new Error(`expected server.ready, got ${JSON.stringify(ready)}`);
    return { socket, ready };
  }

  send(frame: object | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The next frame (in arrival order), optionally skipping frames that do not match. */
  next(predicate: (frame: Frame) => boolean = () => true, timeoutMs = 10_000): Promise<Frame> {
    const index = this.#queue.findIndex(predicate);
    if (index >= 0) {
      const [frame] = this.#queue.splice(0, index + 1).slice(-1);
      return Promise.resolve(frame as Frame);
    }
    this.#queue.length = 0;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        reject(new Error(`no matching frame within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiter = {
        predicate,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
    });
  }

  /** Every frame up to and including the first that matches, in order (nothing skipped). */
  async until(predicate: (frame: Frame) => boolean, timeoutMs = 10_000): Promise<Frame[]> {
    const taken: Frame[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = await this.next(() => true, Math.max(1, deadline - Date.now()));
      taken.push(frame);
      if (predicate(frame)) return taken;
    }
  }

  /** Sends a ping and returns every frame received before its pong. */
  async roundTrip(timeoutMs = 10_000): Promise<Frame[]> {
    this.send({ type: 'ping' });
    const frames = await this.until((frame) => frame.type === 'pong', timeoutMs);
    return frames.slice(0, -1);
  }

  /** Frames received and not yet taken. */
  pending(): readonly Frame[] {
    return this.#queue;
  }

  close(): void {
    this.ws.close();
  }

  #deliver(): void {
    if (this.#waiter === null) return;
    const index = this.#queue.findIndex(this.#waiter.predicate);
    if (index < 0) {
      // Frames that do not match are skipped, exactly as `next` documents.
      this.#queue.length = 0;
      return;
    }
    const [frame] = this.#queue.splice(0, index + 1).slice(-1);
    const { resolve } = this.#waiter;
    this.#waiter = null;
    resolve(frame as Frame);
  }
}
