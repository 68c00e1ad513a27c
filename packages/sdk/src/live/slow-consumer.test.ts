import type { ClientFrame, EventEnvelope } from '@bubble/protocol';
import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubbleClient } from '../client/bubble-client.js';
import type { LiveState } from './live-options.js';
import type { WebSocketFactory } from './web-socket-like.js';
import { nodeWebSocket } from './ws-node.js';

/**
 * A consumer that falls thousands of events behind, against the real server over `ws`, with both
 * ways of holding it back: Node's (the socket stops reading) and the browser's (no flow control:
 * the subscription is parked and catches up by replay; the browser itself runs this in
 * packages/launcher/test/browser-backpressure.test.ts).
 */
let server: TestServer;
let token: string;
const EVENTS = 4_000;

beforeAll(async () => {
  server = await startTestServer();
  token = (await server.createHuman('slow')).token.token;
});

afterAll(async () => {
  await server?.stop();
});

/** Wraps a factory to see the sockets it opens and the frames that cross them. */
function observed(factory: WebSocketFactory, options: { flowControl: boolean }) {
  const seen = { sockets: 0, pings: [] as number[], pongs: 0, subscribes: 0, unsubscribes: 0, pauses: 0 };
  const wrapped: WebSocketFactory = (url, listener, openOptions) => {
    seen.sockets += 1;
    const socket = factory(
      url,
      {
        ...listener,
        onMessage: (frame) => {
          if (frame.kind === 'text' && frame.text === '{"type":"pong"}') seen.pongs += 1;
          listener.onMessage(frame);
        },
      },
      openOptions,
    );
    return {
      get isOpen() {
        return socket.isOpen;
      },
      send(text) {
        const frame = JSON.parse(text) as ClientFrame;
        if (frame.type === 'ping') seen.pings.push(Date.now());
        if (frame.type === 'subscribe') seen.subscribes += 1;
        if (frame.type === 'unsubscribe') seen.unsubscribes += 1;
        socket.send(text);
      },
      close: (code, reason) => socket.close(code, reason),
      terminate: () => socket.terminate(),
      ...(options.flowControl && socket.flowControl
        ? {
            flowControl: {
              pause: () => {
                seen.pauses += 1;
                socket.flowControl?.pause();
              },
              resume: () => socket.flowControl?.resume(),
            },
          }
        : {}),
    };
  };
  return { seen, factory: wrapped };
}

/** Subscribes, stalls while `EVENTS` are appended over HTTP, then reads them all slowly. */
async function fallBehindAndCatchUp(webSocketFactory: WebSocketFactory) {
  const writer = new BubbleClient({ url: server.url, token });
  const states: LiveState[] = [];
  const reader = new BubbleClient({
    url: server.url,
    token,
    live: {
      webSocketFactory,
      heartbeatIntervalMs: 50,
      heartbeatTimeoutMs: 1_000,
      reconnectBaseMs: 20,
      reconnectCapMs: 200,
      onStateChange: (state) => states.push(state),
    },
  });
  try {
    const { thread } = await writer.createThread({ title: 'slow consumer' });
    const subscription = reader.subscribeThread(thread.threadId);
    const seqs: number[] = [((await subscription.next()).value as EventEnvelope).seq];
    for (let batch = 0; batch < EVENTS / 500; batch += 1)
      await writer.appendEvents(
        thread.threadId,
        Array.from({ length: 500 }, (_, i) => ({ type: 'test.note', data: { n: batch * 500 + i } })),
      );
    // Long enough for the backlog to fill the buffer (1 000) and for several heartbeats.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    while (seqs.length < EVENTS + 1) {
      const next = await subscription.next();
      if (next.done) throw new Error(`ended after ${seqs.length} events`);
      seqs.push(next.value.seq);
      if (seqs.length % 25 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return { seqs, states: [...states], liveState: reader.live().connectionState };
  } finally {
    reader.close();
    writer.close();
  }
}

const allSeqs = Array.from({ length: EVENTS + 1 }, (_, i) => i + 1);

describe('a consumer that falls thousands of events behind', () => {
  it('over ws with flow control: reading pauses, and every event arrives once, in order', async () => {
    const { seen, factory } = observed(nodeWebSocket, { flowControl: true });
    const { seqs, liveState } = await fallBehindAndCatchUp(factory);
    expect(seqs).toEqual(allSeqs);
    expect(liveState).toBe('ready');
    expect(seen.pauses).toBeGreaterThan(0);
    expect(seen.unsubscribes).toBe(0);
    expect(seen.pongs).toBeGreaterThan(0);
  });

  it('over ws without flow control (the browser way): parked, caught up by replay, heartbeat never stopped', async () => {
    const { seen, factory } = observed(nodeWebSocket, { flowControl: false });
    const started = Date.now();
    const { seqs, states, liveState } = await fallBehindAndCatchUp(factory);
    expect(seqs).toEqual(allSeqs);
    // One socket all along: no reconnect, no 4008, no dead-link verdict.
    expect(seen.sockets).toBe(1);
    expect(states).toEqual(['connecting', 'ready']);
    expect(liveState).toBe('ready');
    expect(seen.unsubscribes).toBeGreaterThan(0);
    expect(seen.subscribes).toBe(seen.unsubscribes + 1);
    // A ping at least every interval + timeout (1.05 s), from start to end, each answered.
    const gaps = [seen.pings[0]! - started, ...seen.pings.slice(1).map((at, i) => at - seen.pings[i]!)];
    expect(Math.max(...gaps)).toBeLessThan(2_500);
    expect(seen.pongs).toBeGreaterThanOrEqual(seen.pings.length - 1);
  });
});
