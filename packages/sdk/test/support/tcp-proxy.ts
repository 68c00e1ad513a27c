import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy in front of the real server, for connection faults: it can freeze live
 * connections (stop forwarding without closing, like a dead NAT entry), cut them, or refuse new
 * ones for a while.
 */
export class TcpProxy {
  /** Connections accepted and forwarded so far. */
  connections = 0;
  readonly #live = new Set<{ client: Socket; upstream: Socket }>();
  #refusing = false;
  readonly #server: Server;

  private constructor(
    server: Server,
    readonly port: number,
  ) {
    this.#server = server;
  }

  static async start(upstreamPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => {
      const started = proxy;
      if (started === undefined || started.#refusing) {
        client.destroy();
        return;
      }
      started.connections += 1;
      const upstream = connect(upstreamPort, '127.0.0.1');
      const pair = { client, upstream };
      started.#live.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        started.#live.delete(pair);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(server, (server.address() as AddressInfo).port);
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Stops forwarding on every current connection, in both directions, without closing anything. */
  freezeAll(): void {
    for (const { client, upstream } of this.#live) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Cuts every current connection. */
  cutAll(): void {
    for (const { client, upstream } of this.#live) {
      client.destroy();
      upstream.destroy();
    }
    this.#live.clear();
  }

  /** While true, new connections are closed at once. */
  refuse(value: boolean): void {
    this.#refusing = value;
  }

  get openConnections(): number {
    return this.#live.size;
  }

  async stop(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
