import {
  BubbleClient,
  browserWebSocket,
  type LiveState,
  type WebSocketFactory,
  type WebSocketLike,
} from '@bubble/sdk/client';

/**
 * The page of browser-backpressure.test.ts, bundled by Vite from the sdk's browser entry exactly
 * as the web app bundles it (no alias). It follows one thread with `BubbleLive` over the
 * browser's own WebSocket, stalls its consumer until the test releases it, then reads slowly,
 * and records what a test needs to judge it: every seq it got, the sockets opened, the frames
 * that crossed them (pings, pongs, subscribes, unsubscribes) and the connection's states.
 *
 * Its URL is `/?thread=<threadId>#token=<bearer>`.
 */
export interface ProbeReport {
  seqs: number[];
  states: LiveState[];
  sockets: number;
  pings: number[];
  pongs: number;
  subscribes: number[];
  unsubscribes: number;
  socketOpen: boolean;
  errors: string[];
  startedAt: number;
}

declare global {
  interface Window {
    probe: ProbeReport;
    releaseConsumer: () => void;
  }
}

const report: ProbeReport = {
  seqs: [],
  states: [],
  sockets: 0,
  pings: [],
  pongs: 0,
  subscribes: [],
  unsubscribes: 0,
  socketOpen: false,
  errors: [],
  startedAt: Date.now(),
};
window.probe = report;
let released: () => void = () => undefined;
const release = new Promise<void>((resolve) => {
  released = resolve;
});
window.releaseConsumer = () => released();

/** The browser adapter, watched: the test sees the frames without the sdk exposing anything for it. */
const watched: WebSocketFactory = (url, listener, options) => {
  report.sockets += 1;
  const inner: WebSocketLike = browserWebSocket(
    url,
    {
      ...listener,
      onMessage: (frame) => {
        if (frame.kind === 'text' && frame.text === '{"type":"pong"}') report.pongs += 1;
        listener.onMessage(frame);
      },
      onClose: (code, reason) => {
        report.socketOpen = false;
        listener.onClose(code, reason);
      },
      onOpen: () => {
        report.socketOpen = true;
        listener.onOpen();
      },
    },
    options,
  );
  return {
    get isOpen() {
      return inner.isOpen;
    },
    send(text) {
      const frame = JSON.parse(text) as { type: string; afterSeq?: number };
      if (frame.type === 'ping') report.pings.push(Date.now());
      if (frame.type === 'subscribe') report.subscribes.push(frame.afterSeq ?? 0);
      if (frame.type === 'unsubscribe') report.unsubscribes += 1;
      inner.send(text);
    },
    close: (code, reason) => inner.close(code, reason),
    terminate: () => inner.terminate(),
    // No flow control, like the browser adapter it wraps.
  };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function follow(): Promise<void> {
  const threadId = new URLSearchParams(location.search).get('thread');
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (threadId === null || token === null) throw new Error('the page needs ?thread= and #token=');
  const client = new BubbleClient({
    url: location.origin,
    token,
    fetch: (input, init) => globalThis.fetch(input, init),
    live: {
      webSocketFactory: watched,
      heartbeatIntervalMs: 100,
      heartbeatTimeoutMs: 1_000,
      onStateChange: (state) => report.states.push(state),
    },
  });
  const subscription = client.subscribeThread(threadId);
  let stalled = true;
  void release.then(() => {
    stalled = false;
  });
  for await (const event of subscription) {
    report.seqs.push(event.seq);
    // The first event proves the subscription works; then the consumer stops until released,
    // and reads slowly after that (a timer every 25 events, 4 ms at least in a browser).
    if (stalled) await release;
    if (report.seqs.length % 25 === 0) await sleep(1);
  }
}

follow().catch((error: unknown) => {
  report.errors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
});
window.addEventListener('error', (event) => report.errors.push(`error: ${event.message}`));
window.addEventListener('unhandledrejection', (event) => report.errors.push(`unhandled: ${String(event.reason)}`));
