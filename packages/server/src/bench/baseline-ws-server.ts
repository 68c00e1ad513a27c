/**
 * Baseline for the fan-out and memory benchmarks (a child process): a bare
 * `ws` server. Each socket's first message is answered with `{"type":"ready"}`
 * (standing in for authentication); `POST /publish` sends the posted body to
 * every ready socket as one frame each, the plain way (`ws.send` per client).
 * A first message with a `topic` (standing in for a subscription to a thread) also joins that
 * topic, and `POST /publish?topic=T` sends to the sockets of topic T only.
 *
 * Usage: node baseline-ws-server.js; prints `listening on http://127.0.0.1:PORT`.
 */
import { createServer } from 'node:http';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';

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
    for (const socket of topic === null ? ready : (topics.get(topic) ?? [])) socket.send(text);
    response.writeHead(201, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
  });
});
const wss = new WebSocketServer({ server, path: '/v1/ws', perMessageDeflate: false });
wss.on('connection', (socket) => {
  let topic: string | null = null;
  const forget = (): void => {
    ready.delete(socket);
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
