/**
 * Baseline for the append benchmark (a child process): a bare Node `http`
 * server that inserts each posted event into better-sqlite3 (WAL,
 * synchronous=FULL) with group commit: the requests whose bodies arrived in one
 * event-loop turn are inserted in one transaction, and answered once it has
 * committed. So every answered event is as durable as Bubble's. No auth, no
 * validation beyond JSON, no live fan-out, no idempotency or run rules. It
 * waits for the disk on the event loop at every COMMIT, as Bubble did until it
 * moved that sync to the thread pool (`store/sqlite/sqlite-wal-sync.ts`): the
 * plain way to build this, which Bubble is compared to.
 *
 * Usage: node baseline-append-server.js <dataDir>; prints `listening on PORT`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error('usage: baseline-append-server <dataDir>');

const db = new Database(join(dataDir, 'baseline.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE IF NOT EXISTS events (
  id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
  principal_id TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (thread_id, seq))`);
const insert = db.prepare(
  'INSERT INTO events (id, thread_id, seq, type, principal_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
);
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const heads = new Map<string, number>();

interface Pending {
  threadId: string;
  type: string;
  data: unknown;
  response: ServerResponse;
}
let queue: Pending[] = [];

function commitGroup(): void {
  const group = queue;
  queue = [];
  const answers: string[] = [];
  begin.run();
  for (const { threadId, type, data } of group) {
    const seq = (heads.get(threadId) ?? 0) + 1;
    const event = {
      id: `ev_${randomUUID()}`,
      threadId,
      seq,
      type,
      principalId: 'bench',
      data,
      createdAt: new Date().toISOString(),
    };
    insert.run(event.id, threadId, seq, event.type, event.principalId, JSON.stringify(event.data), event.createdAt);
    heads.set(threadId, seq);
    answers.push(JSON.stringify({ events: [event] }));
  }
  commit.run();
  group.forEach(({ response }, i) => {
    const text = answers[i] as string;
    response
      .writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      .end(text);
  });
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const match = /^\/v1\/threads\/([^/]+)\/events$/.exec(request.url ?? '');
    let body: { type?: unknown; data?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      body = {};
    }
    if (request.method !== 'POST' || match === null || typeof body.type !== 'string') {
      response
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":{"code":"invalid_request","message":"bad","details":{}}}');
      return;
    }
    if (queue.length === 0) setImmediate(commitGroup);
    queue.push({ threadId: match[1] as string, type: body.type, data: body.data, response });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address === 'object')
    process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  db.close();
  process.exit(0);
});
