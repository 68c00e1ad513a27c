import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { DumpBackend } from './dump-backend.js';
import {
  ALL_TABLES,
  decodeRow,
  encodeRow,
  EVENTS_TABLE,
  GLOBAL_TABLES,
  THREAD_TABLES,
  THREADS_TABLE,
  type DumpRow,
  type DumpTable,
} from './dump-tables.js';

/**
 * The dump format, one JSON object a line:
 *   {"bubbleDump": 1, "from": "sqlite", "schemaVersion": 4, "exportedAt": "…"}
 *   {"table": "principals", "row": {…}}            principals, owners, tokens, OIDC subjects, revocations
 *   {"table": "threads", "row": {…}}               then each thread, followed by its grants, invites,
 *   {"table": "events", "row": {…}} …              events (in seq order), runs, cursors and artifacts
 *   {"end": true, "rows": {"principals": 2, …}}    the count of every table: a cut-off dump is refused
 */
export const DUMP_FORMAT = 1;

const EVENT_PAGE = 1_000;

export type RowCounts = Record<string, number>;

/** Writes the whole database to `out`, from one snapshot; answers the rows written per table. */
export async function exportDump(
  backend: DumpBackend,
  out: Writable,
  now: () => Date = () => new Date(),
): Promise<RowCounts> {
  const counts: RowCounts = Object.fromEntries(ALL_TABLES.map((t) => [t.name, 0]));
  const line = (value: unknown): Promise<void> | undefined => {
    // Waits only when the stream asks to (a slow disk or pipe), so a large dump never sits in memory.
    if (out.write(`${JSON.stringify(value)}\n`)) return undefined;
    return new Promise((resolve) => out.once('drain', resolve));
  };
  const rows = async (table: DumpTable, found: DumpRow[]) => {
    for (const row of found) {
      counts[table.name]! += 1;
      await line({ table: table.name, row: encodeRow(table, row) });
    }
  };
  await backend.snapshot(async (reader) => {
    await line({
      bubbleDump: DUMP_FORMAT,
      from: backend.kind,
      schemaVersion: backend.schemaVersion,
      exportedAt: now().toISOString(),
    });
    for (const table of GLOBAL_TABLES) await rows(table, await reader.rows(table));
    for (const thread of await reader.rows(THREADS_TABLE)) {
      const threadId = thread.thread_id as string;
      await rows(THREADS_TABLE, [thread]);
      for (const table of THREAD_TABLES) {
        if (table !== EVENTS_TABLE) {
          await rows(table, await reader.rows(table, threadId));
          continue;
        }
        for (let afterSeq = 0; ; ) {
          const page = await reader.rows(table, threadId, { afterSeq, limit: EVENT_PAGE });
          await rows(table, page);
          if (page.length < EVENT_PAGE) break;
          afterSeq = page[page.length - 1]!.seq as number;
        }
      }
    }
    await line({ end: true, rows: counts });
  });
  return counts;
}

export class DumpError extends Error {
  override name = 'DumpError';
}

/**
 * Reads a dump into `backend`, which must hold no row yet, in one transaction: a dump that is
 * malformed, cut off or does not match its own counts lands nothing. Answers the rows per table.
 */
export async function importDump(backend: DumpBackend, input: Readable): Promise<RowCounts> {
  const tables = new Map(ALL_TABLES.map((t) => [t.name, t]));
  const counts: RowCounts = Object.fromEntries(ALL_TABLES.map((t) => [t.name, 0]));
  await backend.transaction(ALL_TABLES, async (writer) => {
    // Inside the transaction, under its lock: of two imports started together, the second sees the first's rows.
    if (!(await writer.isEmpty(ALL_TABLES))) {
      throw new DumpError(
        `the target ${backend.kind} database is not empty: import only into a new one (it holds principals, tokens or threads)`,
      );
    }
    let lineNo = 0;
    let header = false;
    let footer: RowCounts | undefined;
    let pending: { table: DumpTable; rows: DumpRow[] } | undefined;
    const flush = async () => {
      if (pending && pending.rows.length > 0) await writer.insert(pending.table, pending.rows);
      pending = undefined;
    };
    for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      lineNo += 1;
      if (text.trim() === '') continue;
      if (footer !== undefined) throw new DumpError(`line ${lineNo}: text after the end of the dump`);
      let value: Record<string, unknown>;
      try {
        value = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new DumpError(`line ${lineNo}: not JSON`);
      }
      if (!header) {
        if (value.bubbleDump !== DUMP_FORMAT)
          throw new DumpError(`line 1: not a bubble-server dump of format ${DUMP_FORMAT}`);
        header = true;
        continue;
      }
      if (value.end === true) {
        footer = value.rows as RowCounts;
        continue;
      }
      const table = tables.get(value.table as string);
      if (table === undefined) throw new DumpError(`line ${lineNo}: unknown table ${JSON.stringify(value.table)}`);
      if (pending?.table !== table || pending.rows.length >= 500) {
        await flush();
        pending = { table, rows: [] };
      }
      try {
        pending.rows.push(decodeRow(table, value.row, lineNo));
      } catch (error) {
        throw new DumpError((error as Error).message);
      }
      counts[table.name]! += 1;
    }
    await flush();
    if (!header) throw new DumpError('the dump is empty');
    if (footer === undefined) throw new DumpError('the dump has no end line: it was cut off');
    const mismatched = ALL_TABLES.filter((t) => (footer[t.name] ?? 0) !== counts[t.name]);
    if (mismatched.length > 0) {
      throw new DumpError(
        `the dump's counts do not match its rows: ${mismatched.map((t) => `${t.name} ${counts[t.name]} of ${footer[t.name] ?? 0}`).join(', ')}`,
      );
    }
  });
  return counts;
}
