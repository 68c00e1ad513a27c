import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { WebSocketFactory, WebSocketLike, WebSocketListener } from './web-socket-like.js';
import { browserWebSocket, browserWebSocketFrom } from './ws-browser.js';
import { nodeWebSocket } from './ws-node.js';

/**
 * One contract for every `WebSocketLike` adapter, run against a real `ws` server on loopback:
 * the Node adapter, and the browser adapter over `ws`'s WHATWG-style class (the same API as the
 * browser's; the real browser runs it in packages/launcher/test/browser-backpressure.test.ts).
 */
let server: WebSocketServer;
let url: string;
/** What the server side received, per connection, in order. */
let received: string[] = [];
let serverClose: Promise<{ code: number; reason: string }>;

beforeAll(async () => {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.on('connection', (peer) => {
    serverClose = new Promise((resolve) =>
      peer.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    peer.on('message', (data) => {
      const text = data.toString();
      received.push(text);
      const [command, arg, extra] = text.split(':');
      if (command === 'echo') peer.send(arg ?? '');
      if (command === 'binary') peer.send(Buffer.from([1, 2, 3]), { binary: true });
      if (command === 'burst') for (let i = 1; i <= Number(arg); i += 1) peer.send(`n${i}`);
      if (command === 'big') peer.send('x'.repeat(Number(arg)));
      if (command === 'close') peer.close(Number(arg), extra ?? '');
    });
  });
});

afterEach(() => {
  received = [];
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** A listener that records what the socket reports, with a way to wait for it. */
function recorder() {
  const log: string[] = [];
  const waiters: Array<() => void> = [];
  const note = (entry: string) => {
    log.push(entry);
    for (const wake of waiters.splice(0)) wake();
  };
  const listener: WebSocketListener = {
    onOpen: () => note('open'),
    onMessage: (frame) => note(frame.kind === 'text' ? `text ${frame.text}` : 'binary'),
    onClose: (code, reason) => note(`close ${code} ${reason}`.trim()),
    onError: () => note('error'),
  };
  const until = async (predicate: (entries: string[]) => boolean): Promise<string[]> => {
    const deadline = Date.now() + 5_000;
    while (!predicate(log)) {
      if (Date.now() > deadline) throw new Error(`timed out; saw ${JSON.stringify(log)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return log;
  };
  return { log, listener, until };
}

const OPTIONS = { handshakeTimeoutMs: 2_000, maxPayloadBytes: 64 * 1024 };

async function open(factory: WebSocketFactory, options = OPTIONS) {
  const rec = recorder();
  const socket = factory(url, rec.listener, options);
  await rec.until((log) => log.includes('open'));
  return { socket, ...rec };
}

const closed = (log: string[]) => log.some((entry) => entry.startsWith('close'));

const adapters: Array<[string, WebSocketFactory]> = [
  ['nodeWebSocket', nodeWebSocket],
  ['browserWebSocketFrom(ws)', browserWebSocketFrom(WebSocket)],
];

describe.each(adapters)('%s keeps the WebSocketLike contract', (_name, factory) => {
  it('opens, sends text frames and reports the ones it receives, in order', async () => {
    const { socket, log, until } = await open(factory);
    expect(socket.isOpen).toBe(true);
    socket.send('echo:hello');
    socket.send('burst:3');
    await until((entries) => entries.length >= 5);
    expect(log).toEqual(['open', 'text hello', 'text n1', 'text n2', 'text n3']);
    expect(received).toEqual(['echo:hello', 'burst:3']);
    socket.close(1000, 'done');
  });

  it('reports a binary frame as binary, without its bytes', async () => {
    const { socket, log, until } = await open(factory);
    socket.send('binary');
    await until((entries) => entries.length >= 2);
    expect(log[1]).toBe('binary');
    socket.close(1000, 'done');
  });

  it("reports the server's close code and reason once, and is no longer open", async () => {
    const { socket, log, until } = await open(factory);
    socket.send('close:4008:slow consumer');
    await until(closed);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(log.filter((entry) => entry.startsWith('close'))).toEqual(['close 4008 slow consumer']);
    expect(socket.isOpen).toBe(false);
  });

  it('closes with the code and reason it is given', async () => {
    const { socket, until } = await open(factory);
    socket.close(1000, 'no subscriptions left');
    expect(await serverClose).toEqual({ code: 1000, reason: 'no subscriptions left' });
    await until(closed);
  });

  it('terminates without a handshake and reports 1006, once', async () => {
    const { socket, log, until } = await open(factory);
    socket.terminate();
    await until(closed);
    socket.terminate();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(log.filter((entry) => entry.startsWith('close'))).toEqual(['close 1006']);
    expect(socket.isOpen).toBe(false);
  });
});

describe('nodeWebSocket', () => {
  it('stops delivering frames while paused and delivers them all, in order, on resume', async () => {
    const { socket, log, until } = await open(nodeWebSocket);
    expect(socket.flowControl).toBeDefined();
    socket.flowControl?.pause();
    socket.send('burst:5');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(received).toEqual(['burst:5']);
    expect(log).toEqual(['open']);
    socket.flowControl?.resume();
    await until((entries) => entries.length >= 6);
    expect(log.slice(1)).toEqual(['text n1', 'text n2', 'text n3', 'text n4', 'text n5']);
    socket.close(1000, 'done');
  });

  it('refuses a frame over maxPayloadBytes: an error, the peer told 1009, and the close', async () => {
    const { socket, log, until } = await open(nodeWebSocket, { ...OPTIONS, maxPayloadBytes: 1024 });
    socket.send('big:4096');
    await until(closed);
    expect(log).toContain('error');
    expect(log).not.toContain(`text ${'x'.repeat(4096)}`);
    expect((await serverClose).code).toBe(1009);
  });
});

describe('browserWebSocket', () => {
  it('has no flow control: a consumer that falls behind is the live connection’s to handle', async () => {
    const { socket } = await open(browserWebSocketFrom(WebSocket));
    expect(socket.flowControl).toBeUndefined();
    socket.close(1000, 'done');
  });

  it('sends a close code scripts may not use as 1000, and cuts the reason to 123 bytes', async () => {
    const { socket } = await open(browserWebSocketFrom(WebSocket));
    socket.close(1001, 'é'.repeat(100));
    const { code, reason } = await serverClose;
    expect(code).toBe(1000);
    expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
    expect(reason).toBe('é'.repeat(61));
  });

  it('ignores what the socket reports after terminate', async () => {
    const { socket, log, until } = await open(browserWebSocketFrom(WebSocket));
    socket.send('burst:50');
    socket.terminate();
    expect(log.at(-1)).toBe('close 1006');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await until(closed);
    expect(log.filter((entry) => !entry.startsWith('text'))).toEqual(['open', 'close 1006']);
  });

  it('uses the global WebSocket when a socket is opened, and says so when there is none', async () => {
    const rec = recorder();
    expect(() => browserWebSocket(url, rec.listener, OPTIONS)).toThrow(/no global WebSocket/);
    vi.stubGlobal('WebSocket', WebSocket);
    try {
      const socket: WebSocketLike = browserWebSocket(url, rec.listener, OPTIONS);
      await rec.until((log) => log.includes('open'));
      expect(socket.flowControl).toBeUndefined();
      socket.close(1000, 'done');
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
