import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Transform } from 'node:stream';

/** How {@link CuttableProxy.breakNext} breaks the connection whose client sends `sent`. */
export type ConnectionBreak =
  /**
   * The bytes reach the database and its answers are dropped; once one containing `until` has come
   * back, the connection is dropped. Without `until`, the client's end is dropped at once and the
   * database's is left open (until `cut`), so the database goes on with what it was sent.
   */
  | { sent: Buffer; deliver: true; until?: Buffer }
  /**
   * The bytes never reach the database. The connection is dropped at once, or with `hang` left as a
   * half-open one is: the client hears nothing more, the database only what it already had (until `cut`).
   */
  | { sent: Buffer; deliver: false; hang?: boolean };

/** A TCP proxy (to the database, in the tests) that can be cut (every connection dropped, new ones refused) and opened again. */
export class CuttableProxy {
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  #break: { rule: ConnectionBreak; sprung: () => void } | null = null;
  port = 0;

  constructor(
    readonly host: string,
    readonly targetPort: number,
  ) {}

  /** A proxy, open, in front of the PostgreSQL server of `databaseUrl`; `url` is the same database through it. */
  static async inFrontOf(databaseUrl: string): Promise<{ proxy: CuttableProxy; url: string }> {
    const target = new URL(databaseUrl);
    const proxy = new CuttableProxy(target.hostname, Number(target.port || 5432));
    await proxy.open();
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    return { proxy, url: url.toString() };
  }

  /** Listens on `port` (0: a free one, the first time; the same one again to mend a cut). */
  async open(port = 0): Promise<void> {
    const server = createServer((incoming) => {
      const upstream = connect(this.targetPort, this.host);
      const link = { hanging: false };
      for (const socket of [incoming, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          if (link.hanging) return;
          incoming.destroy();
          upstream.destroy();
        });
      }
      incoming
        .pipe(this.#watch(incoming, upstream, link))
        .pipe(upstream)
        .pipe(incoming);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  get isOpen(): boolean {
    return this.#server !== null;
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (server === null ? resolve() : server.close(() => resolve())));
  }

  /**
   * Breaks the first connection (open now or later) whose client sends `rule.sent` from now on, as
   * `rule` says; resolves once it has (with `deliver`, once the database's answer came back).
   */
  breakNext(rule: ConnectionBreak): Promise<void> {
    return new Promise((sprung) => {
      this.#break = { rule, sprung };
    });
  }

  /** What the client sends, passed on unless it springs the break. */
  #watch(incoming: Socket, upstream: Socket, link: { hanging: boolean }): Transform {
    // The end of what came before, so that bytes split across two chunks are seen too.
    let tail = Buffer.alloc(0);
    let broken = false;
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        if (broken) return done();
        const armed = this.#break;
        const seen = Buffer.concat([tail, chunk]);
        tail = seen.subarray(-TAIL_BYTES);
        // Only bytes that end in this chunk: what passed before the break was armed does not spring it.
        const from = Math.max(0, seen.length - chunk.length - (armed?.rule.sent.length ?? 0) + 1);
        if (armed === null || !seen.includes(armed.rule.sent, from)) return done(null, chunk);
        this.#break = null;
        broken = true;
        const { rule, sprung } = armed;
        if (rule.deliver) {
          const until = rule.until;
          upstream.unpipe(incoming);
          if (until === undefined) {
            link.hanging = true;
            upstream.resume();
            incoming.unpipe();
            incoming.destroy();
            sprung();
            return done(null, chunk);
          }
          let answer = Buffer.alloc(0);
          upstream.on('data', (data: Buffer) => {
            answer = Buffer.concat([answer, data]);
            if (!answer.includes(until)) return;
            incoming.destroy();
            upstream.destroy();
            sprung();
          });
          // Unpiped, it was paused: a listener alone does not make it flow again.
          upstream.resume();
          return done(null, chunk);
        }
        if (rule.hang) {
          // Neither end hears of the other again: not of the client's close, nor of anything the database sends.
          link.hanging = true;
          incoming.unpipe();
          upstream.unpipe(incoming);
          upstream.resume();
        } else {
          incoming.destroy();
          upstream.destroy();
        }
        sprung();
        done();
      },
    });
  }
}

/** Longer than any `sent` a test looks for. */
const TAIL_BYTES = 256;
