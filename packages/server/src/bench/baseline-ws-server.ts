/**
 * Baseline for the fan-out and memory benchmarks (a child process): a bare
 * `ws` server. Each socket's first message is answered with `{"type":"ready"}`
 * (standing in for authentication); `POST /publish` sends the posted body to
 * every ready socket as one frame each, the plain way (`ws.send` per client).
 * A first message with a `topic` (standing in for a subscription to a thread) also joins that
 * topic, and `POST /publish?topic=T` sends to the sockets of topic T only.
 *
 * With `--coalesce` it is instead the floor of any server that writes these frames: each posted
 * frame is encoded once, queued on every socket, and written the way Bubble's hub writes
 * (`ws/ws-hub.ts`): every socket's queue in one write at the end of the turn, the next flush held
 * back by half the time the last one took (at most the same cap), the bytes joined once and shared
 * by sockets that queued the same frames. No authentication, no store, no durable commit: what is
 * left is the cost of the writes themselves on this machine.
 *
 * Usage: node baseline-ws-server.js [--coalesce]; prints `listening on http://127.0.0.1:PORT`.
 */
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { DEFAULT_FLUSH_INTERVAL_MS } from '../ws/attach-websocket.js';
import { JoinedFrames } from '../ws/live-batch.js';
import { HOLD_PER_FLUSH_TIME } from '../ws/ws-hub.js';
import { encodeTextFrame } from '../ws/ws-frame.js';

const coalesce = process.argv.includes('--coalesce');

const ready = new Set<WebSocket>();
const topics = new Map<string, Set<WebSocket>>();
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const [path, query] = (request.url ?? '').split('?', 2);
    if (request.method !== 'POST' || path !== '/publish') {
      response.writeHead(404).end();
      return;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const topic = query === undefined ? null : new URLSearchParams(query).get('topic');
    const sockets = topic === null ? ready : (topics.get(topic) ?? []);
    if (coalesce) {
      const frame = encodeTextFrame(text);
      for (const socket of sockets) queue(socket, frame);
    } else for (const socket of sockets) socket.send(text);
    response.writeHead(201, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
  });
});
const wss = new WebSocketServer({ server, path: '/v1/ws', perMessageDeflate: false });
wss.on('connection', (socket) => {
  let topic: string | null = null;
  const forget = (): void => {
    ready.delete(socket);
    queued.delete(socket);
    if (topic !== null) topics.get(topic)?.delete(socket);
  };
  socket.once('message', (data: Buffer) => {
    ready.add(socket);
    const named = topicOf(data);
    if (named !== null) {
      topic = named;
      let members = topics.get(named);
      if (members === undefined) topics.set(named, (members = new Set()));
      members.add(socket);
    }
    socket.send('{"type":"ready"}');
  });
  socket.on('close', forget);
  socket.on('error', forget);
});
const queued = new Map<WebSocket, Buffer[]>();
let flushScheduled = false;
let nextFlushAt = Number.NEGATIVE_INFINITY;

function queue(socket: WebSocket, frame: Buffer): void {
  let frames = queued.get(socket);
  if (frames === undefined) queued.set(socket, (frames = []));
  frames.push(frame);
  if (flushScheduled) return;
  flushScheduled = true;
  const wait = nextFlushAt - performance.now();
  if (wait <= 0) queueMicrotask(flush);
  else setTimeout(flush, wait);
}

function flush(): void {
  flushScheduled = false;
  const startedAt = performance.now();
  const joined = new JoinedFrames();
  for (const [socket, frames] of queued) {
    if (socket.readyState !== socket.OPEN) continue;
    const bytes = frames.reduce((sum, f) => sum + f.length, 0);
    // Whole frames, unmasked, no extension negotiated: the same bytes `ws` would write.
    (socket as unknown as { _socket: Socket })._socket.write(
      frames.length === 1 ? (frames[0] as Buffer) : joined.join(frames, bytes),
    );
  }
  queued.clear();
  const finishedAt = performance.now();
  nextFlushAt = finishedAt + Math.min(DEFAULT_FLUSH_INTERVAL_MS, (finishedAt - startedAt) * HOLD_PER_FLUSH_TIME);
}

/** The `topic` of a socket's first message, if it is JSON with one. */
function topicOf(data: Buffer): string | null {
  try {
    const topic = (JSON.parse(data.toString('utf8')) as { topic?: unknown }).topic;
    return typeof topic === 'string' ? topic : null;
  } catch {
    return null;
  }
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address === 'object')
    process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
