import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with one request. */
export type FaultAction =
  | { kind: 'forward' }
  /** Forwards the request, lets the server act on it, then resets the client's connection instead of answering. */
  | { kind: 'drop-response' }
  /** Forwards the request, then holds the answer for `ms` before sending it. */
  | { kind: 'delay-response'; ms: number }
  /** Answers by itself without forwarding. */
  | { kind: 'answer'; status: number; body: string; headers?: Record<string, string> };

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly action: FaultAction['kind'];
}

/** A loopback HTTP proxy in front of the real server that injects faults per request. */
export class HttpFaultProxy {
  readonly seen: SeenRequest[] = [];
  readonly #server: Server;

  private constructor(
    server: Server,
    readonly url: string,
  ) {
    this.#server = server;
  }

  static async start(
    upstream: string,
    plan: (method: string, path: string, index: number) => FaultAction,
  ): Promise<HttpFaultProxy> {
    let proxy: HttpFaultProxy | undefined;
    const server = createServer((req, res) => {
      void (async () => {
        const body = await readBody(req);
        const method = req.method ?? 'GET';
        const path = req.url ?? '/';
        const action = plan(method, path, proxy?.seen.length ?? 0);
        proxy?.seen.push({ method, path, action: action.kind });
        if (action.kind === 'answer') {
          res.writeHead(action.status, action.headers ?? {});
          res.end(action.body);
          return;
        }
        const headers: Record<string, string> = {};
        for (const [key, value] of Object.entries(req.headers)) {
          if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(key))
            headers[key] = value;
        }
        const upstreamResponse = await fetch(new URL(path, upstream), {
          method,
          headers,
          body: body.length > 0 ? body : undefined,
        });
        const text = await upstreamResponse.text();
        if (action.kind === 'drop-response') {
          req.socket.destroy();
          return;
        }
        if (action.kind === 'delay-response') await new Promise((resolve) => setTimeout(resolve, action.ms));
        if (req.socket.destroyed) return;
        const outHeaders: Record<string, string> = {};
        upstreamResponse.headers.forEach((value, key) => {
          if (!['content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(key))
            outHeaders[key] = value;
        });
        res.writeHead(upstreamResponse.status, outHeaders);
        res.end(text);
      })().catch(() => req.socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    proxy = new HttpFaultProxy(server, `http://127.0.0.1:${port}`);
    return proxy;
  }

  count(method: string, pathPrefix: string): number {
    return this.seen.filter((r) => r.method === method && r.path.startsWith(pathPrefix)).length;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
