/**
 * Baseline for the fan-out and memory benchmarks (a child process): a bare
 * `ws` server. Each socket's first message is answered with `{"type":"ready"}`
 * (standing in for authentication); `POST /publish` sends the posted body to
 * every ready socket as one frame each, the plain way (`ws.send` per client).
 *
 * Usage: node baseline-ws-server.js; prints `listening on http://127.0.0.1:PORT`.
 */
import { createServer } from 'node:http';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';

const ready = new Set<WebSocket>();
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.method !== 'POST' || request.url !== '/publish') {
      response.writeHead(404).end();
      return;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    for (const socket of ready) socket.send(text);
    response.writeHead(201, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
  });
});
const wss = new WebSocketServer({ server, path: '/v1/ws', perMessageDeflate: false });
wss.on('connection', (socket) => {
  socket.once('message', () => {
    ready.add(socket);
    socket.send('{"type":"ready"}');
  });
  socket.on('close', () => ready.delete(socket));
  socket.on('error', () => ready.delete(socket));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address === 'object')
    process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
