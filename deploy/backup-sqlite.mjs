#!/usr/bin/env node
// An online backup of a Bubble server's SQLite database, taken while the server runs:
//   node deploy/backup-sqlite.mjs /var/lib/bubble/bubble.db /var/backups/bubble/bubble-$(date +%F).db
// SQLite's backup API (through better-sqlite3, which the server already uses) copies a
// consistent snapshot, the write-ahead log included; copying the file with cp does not.
// The copy is checked (PRAGMA integrity_check) and written with mode 0600: it holds every
// thread and every token's hash. Run it as the server's user (sudo -u bubble …).
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

const [from, to] = process.argv.slice(2);
if (from === undefined || to === undefined || process.argv.length !== 4) {
  process.stderr.write('usage: node deploy/backup-sqlite.mjs <data>/bubble.db <backup file>\n');
  process.exit(2);
}
if (!existsSync(from)) {
  process.stderr.write(`backup: ${from} does not exist (the server's database is <--data folder>/bubble.db)\n`);
  process.exit(1);
}
if (existsSync(to)) {
  process.stderr.write(`backup: ${to} exists already; choose a new name (a date in it, say)\n`);
  process.exit(1);
}
process.umask(0o077);
const source = new Database(from, { fileMustExist: true });
try {
  const { totalPages } = await source.backup(to);
  const copy = new Database(to, { readonly: true });
  const check = copy.pragma('integrity_check', { simple: true });
  copy.close();
  if (check !== 'ok') {
    process.stderr.write(`backup: the copy ${to} failed its integrity check: ${check}\n`);
    process.exit(1);
  }
  process.stdout.write(`backed up ${from} to ${to} (${totalPages} pages, integrity ok)\n`);
} finally {
  source.close();
}
