/**
 * Baseline for the growth benches' reads and backlog replay (a child process): bare `http` and
 * bare `ws` over better-sqlite3, opened on the same database file as the Bubble server under test
 * (WAL: both read it at once), with the store's own SQL and row-to-envelope mapping. No
 * authentication, no access check, no validation: what reading those rows and sending them costs
 * by itself.
 *
 * - `GET /v1/threads/:id/events?after=|before=&limit=` answers `{events, headSeq}` like Bubble.
 * - `/v1/ws`: a socket's first message is answered `{"type":"ready"}`; then
 *   `{type: "subscribe", id, threadId, afterSeq}` is answered `subscribed` and every event above
 *   `afterSeq`, read 100 a page as Bubble does, as `{type: "event", id, event}` frames, each page
 *   written in one corked burst, pausing for `drain` past 2 MiB queued (half Bubble's bound).
 *
 * Usage: node baseline-sqlite-server.js DATABASE_FILE; prints `listening on http://127.0.0.1:PORT`.
 */
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import Database from 'better-sqlite3';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { toEnvelope, type EventRow } from '../store/sqlite/sqlite-rows.js';

const PAGE_EVENTS = 100;
const PAUSE_PAST_BYTES = 2 * 1024 * 1024;
const EVENT_COLUMNS = 'thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: baseline-sqlite-server DATABASE_FILE');
const db = new Database(file, { fileMustExist: true });
const headSeq = db.prepare('SELECT head_seq FROM threads WHERE thread_id = ?').pluck();
const after = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?`);
const before = db.prepare(
  `SELECT ${EVENT_COLUMNS} FROM events WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
);

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://x');
  const match = /^\/v1\/threads\/([^/]+)\/events$/.exec(url.pathname);
  if (request.method !== 'GET' || match === null) {
    response.writeHead(404).end();
    return;
  }
  const threadId = decodeURIComponent(match[1] as string);
  const limit = Number(url.searchParams.get('limit') ?? 100);
  const beforeSeq = url.searchParams.get('before');
  const head = headSeq.get(threadId) as number | undefined;
  if (head === undefined) {
    response.writeHead(404).end();
    return;
  }
  const rows =
    beforeSeq === null
      ? (after.all(threadId, Number(url.searchParams.get('after') ?? 0), limit) as EventRow[])
      : (before.all(threadId, Number(beforeSeq), limit) as EventRow[]).reverse();
  const body = JSON.stringify({ events: rows.map(toEnvelope), headSeq: head });
  response
    .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    .end(body);
});

async function replay(ws: WebSocket, socket: Socket, id: string, threadId: string, from: number): Promise<void> {
  const prefix = `{"type":"event","id":${JSON.stringify(id)},"event":`;
  let last = from;
  for (;;) {
    if (socket.destroyed) return;
    const rows = after.all(threadId, last, PAGE_EVENTS) as EventRow[];
    if (rows.length === 0) return;
    socket.cork();
    for (const row of rows) ws.send(`${prefix}${JSON.stringify(toEnvelope(row))}}`);
    socket.uncork();
    last = (rows[rows.length - 1] as EventRow).seq;
    if (socket.writableLength > PAUSE_PAST_BYTES) await new Promise((resolve) => socket.once('drain', resolve));
  }
}

const wss = new WebSocketServer({ server, path: '/v1/ws', perMessageDeflate: false });
wss.on('connection', (ws, request) => {
  const socket = request.socket as Socket;
  let ready = false;
  ws.on('message', (data: Buffer) => {
    if (!ready) {
      ready = true;
      ws.send('{"type":"ready"}');
      return;
    }
    const frame = JSON.parse(data.toString('utf8')) as { type: string; id: string; threadId: string; afterSeq: number };
    if (frame.type !== 'subscribe') return;
    const head = (headSeq.get(frame.threadId) as number | undefined) ?? 0;
    ws.send(JSON.stringify({ type: 'subscribed', id: frame.id, headSeq: head }));
    void replay(ws, socket, frame.id, frame.threadId, frame.afterSeq);
  });
  ws.on('error', () => {});
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address === 'object')
    process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
