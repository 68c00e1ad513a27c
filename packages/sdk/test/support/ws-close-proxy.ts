import WebSocket from 'ws';
import { listenForRelay, type WsRelayListener } from './ws-relay-listener.js';

/**
 * A loopback WebSocket relay in front of the real server's `/v1/ws` that can close the client's
 * side with a code of the test's choice (4001, as the server does when an access token expires
 * on an open socket). Frames pass through unchanged; HTTP is not relayed (use the server's URL).
 */
export class WsCloseProxy {
  /** Every `client.auth` token the clients sent, in order. */
  readonly authTokens: string[] = [];
  /** Every thread subscribe the clients sent (alone or in a `subscribe_batch`), in order, with where it resumes (`afterSeq`). */
  readonly subscribes: { threadId: string; afterSeq: number | undefined }[] = [];
  /** When set, answers `client.auth` itself by closing with this code and reason (the server is not asked). */
  refuseAuth: { code: number; reason: string } | null = null;
  readonly #pairs = new Set<{ client: WebSocket; upstream: WebSocket }>();
  #listener: WsRelayListener | null = null;

  private constructor() {}

  get wsUrl(): string {
    return (this.#listener as WsRelayListener).wsUrl;
  }

  static async start(upstreamWsUrl: string): Promise<WsCloseProxy> {
    const proxy = new WsCloseProxy();
    proxy.#listener = await listenForRelay((client) => {
      const upstream = new WebSocket(upstreamWsUrl);
      const pair = { client, upstream };
      proxy.#pairs.add(pair);
      const early: string[] = [];
      client.on('message', (data) => {
        const text = data.toString();
        try {
          const frame = JSON.parse(text) as {
            type?: string;
            token?: string;
            threadId?: string;
            afterSeq?: number;
            subscriptions?: { threadId: string; afterSeq?: number }[];
          };
          if (frame.type === 'client.auth' && typeof frame.token === 'string') {
            proxy.authTokens.push(frame.token);
            if (proxy.refuseAuth !== null) {
              const { code, reason } = proxy.refuseAuth;
              proxy.#pairs.delete(pair);
              client.close(code, reason);
              upstream.terminate();
              return;
            }
          }
          if (frame.type === 'subscribe' && typeof frame.threadId === 'string')
            proxy.subscribes.push({ threadId: frame.threadId, afterSeq: frame.afterSeq });
          if (frame.type === 'subscribe_batch' && Array.isArray(frame.subscriptions))
            for (const entry of frame.subscriptions)
              proxy.subscribes.push({ threadId: entry.threadId, afterSeq: entry.afterSeq });
        } catch {
          // not JSON: relayed as it is
        }
        if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
        else early.push(text);
      });
      upstream.on('open', () => {
        for (const text of early.splice(0)) upstream.send(text);
      });
      upstream.on('message', (data) => {
        if (client.readyState === WebSocket.OPEN) client.send(data.toString());
      });
      const end = (code: number, reason: string) => {
        proxy.#pairs.delete(pair);
        if (client.readyState === WebSocket.OPEN) client.close(code, reason);
        if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING)
          upstream.terminate();
      };
      upstream.on('close', (code, reason) => end(code >= 4000 ? code : 1011, reason.toString()));
      upstream.on('error', () => end(1011, 'upstream error'));
      client.on('close', () => {
        proxy.#pairs.delete(pair);
        upstream.terminate();
      });
    });
    return proxy;
  }

  /** Closes every open client socket with `code` (and drops its upstream socket). */
  closeClients(code: number, reason = ''): void {
    const open = [...this.#pairs];
    this.#pairs.clear();
    for (const { client, upstream } of open) {
      client.close(code, reason);
      upstream.terminate();
    }
  }

  async stop(): Promise<void> {
    this.closeClients(1001);
    await this.#listener?.close();
  }
}
