import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP proxy (to the database, in the tests) that can be cut (every connection dropped, new ones refused) and opened again. */
export class CuttableProxy {
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  port = 0;

  constructor(
    readonly host: string,
    readonly targetPort: number,
  ) {}

  /** Listens on `port` (0: a free one, the first time; the same one again to mend a cut). */
  async open(port = 0): Promise<void> {
    const server = createServer((incoming) => {
      const upstream = connect(this.targetPort, this.host);
      for (const socket of [incoming, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          incoming.destroy();
          upstream.destroy();
        });
      }
      incoming.pipe(upstream).pipe(incoming);
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
}
