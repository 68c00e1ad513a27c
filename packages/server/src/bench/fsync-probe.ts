/**
 * How many durable commits per second this disk allows (a child process of the
 * benchmark): single-row inserts into better-sqlite3, WAL + synchronous=FULL,
 * one commit each, for one second. Context for the append figures: a server
 * that commits once per request cannot beat it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const dir = mkdtempSync(join(process.argv[2] ?? '.', 'fsync-probe-'));
const db = new Database(join(dir, 'probe.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE t (v TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
let commits = 0;
const start = performance.now();
while (performance.now() - start < 1_000) {
  insert.run('x'.repeat(100));
  commits += 1;
}
const perSecond = commits / ((performance.now() - start) / 1000);
db.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ commitsPerSecond: perSecond })}\n`);
