/**
 * The tables a dump carries (`bubble-server export` / `import`), the same on SQLite and
 * PostgreSQL: every column of each, in an order both stores can read. Rows are written as JSON
 * objects keyed by column; token and invite hashes as base64, run flags as booleans.
 *
 * What is left out, on purpose: `schema_migrations` (the target migrates itself) and PostgreSQL's
 * `outbox`, `cluster_instances` and `presence` (messages between running instances and who holds a
 * socket on which, meaningless once they stop). The insertion order
 * of tokens, threads, invites and invitations (SQLite's rowid, PostgreSQL's `ord`), which some lists answer
 * in, is kept by writing and reading rows in that order; grant ids are carried as they are.
 */
export interface DumpTable {
  readonly name: string;
  readonly columns: readonly string[];
  /** Columns holding bytes: base64 text in the dump. */
  readonly binary?: readonly string[];
  /** Columns holding flags: booleans in the dump (SQLite stores 0 and 1). */
  readonly boolean?: readonly string[];
  /** ORDER BY; `$ord` stands for the insertion order (SQLite's rowid, PostgreSQL's `ord`). */
  readonly order: string;
  /** Rows of one thread, dumped after the thread's own row. */
  readonly perThread: boolean;
  /** A PostgreSQL identity column the dump carries: inserted as it is, its sequence moved past it after. */
  readonly identity?: string;
}

export const GLOBAL_TABLES: readonly DumpTable[] = [
  {
    name: 'principals',
    columns: ['principal_id', 'kind', 'display_name', 'joinable_by', 'created_at'],
    order: 'principal_id',
    perThread: false,
  },
  {
    name: 'principal_owners',
    columns: ['principal_id', 'owner_principal_id', 'position'],
    order: 'principal_id, position',
    perThread: false,
  },
  {
    name: 'tokens',
    columns: ['token_id', 'principal_id', 'hash', 'created_at', 'revoked_at'],
    binary: ['hash'],
    order: '$ord',
    perThread: false,
  },
  {
    name: 'oidc_subjects',
    columns: ['issuer', 'subject', 'principal_id', 'name_claim', 'created_at', 'jwts_not_before'],
    order: 'issuer, subject',
    perThread: false,
  },
  {
    name: 'token_revocations',
    columns: ['seq', 'token_id', 'principal_id', 'revoked_at'],
    order: 'seq',
    perThread: false,
    identity: 'seq',
  },
  // Not per thread: one person's invitations keep their order across threads (the oldest drop first).
  {
    name: 'invitations',
    columns: ['thread_id', 'principal_id', 'role', 'invited_by', 'created_at', 'expires_at'],
    order: '$ord',
    perThread: false,
  },
];

export const THREADS_TABLE: DumpTable = {
  name: 'threads',
  columns: ['thread_id', 'parent_thread_id', 'title', 'created_by', 'created_at', 'head_seq', 'create_key'],
  order: '$ord',
  perThread: false,
};

/** Events are read in pages of seqs; the other tables of a thread at once. */
export const EVENTS_TABLE: DumpTable = {
  name: 'events',
  columns: ['thread_id', 'seq', 'event_id', 'type', 'principal_id', 'data', 'client_event_id', 'created_at'],
  order: 'seq',
  perThread: true,
};

export const THREAD_TABLES: readonly DumpTable[] = [
  {
    name: 'grants',
    columns: ['grant_id', 'thread_id', 'principal_id', 'role', 'granted_by', 'granted_at', 'joined_seq', 'revoked_at'],
    order: 'grant_id',
    perThread: true,
    identity: 'grant_id',
  },
  {
    name: 'invites',
    columns: [
      'invite_id',
      'thread_id',
      'role',
      'created_by',
      'hash',
      'created_at',
      'expires_at',
      'max_uses',
      'uses',
      'revoked_at',
    ],
    binary: ['hash'],
    order: '$ord',
    perThread: true,
  },
  EVENTS_TABLE,
  {
    name: 'runs',
    columns: ['thread_id', 'run_id', 'principal_id', 'started', 'finished'],
    boolean: ['started', 'finished'],
    order: 'run_id',
    perThread: true,
  },
  { name: 'cursors', columns: ['thread_id', 'principal_id', 'seq'], order: 'principal_id', perThread: true },
  {
    name: 'artifacts',
    columns: ['thread_id', 'name', 'version', 'media_type', 'content', 'size', 'updated_by', 'updated_at'],
    order: 'name, version',
    perThread: true,
  },
];

export const ALL_TABLES: readonly DumpTable[] = [...GLOBAL_TABLES, THREADS_TABLE, ...THREAD_TABLES];

export type DumpRow = Record<string, unknown>;

/** A row as the store gave it, as the dump writes it. */
export function encodeRow(table: DumpTable, row: DumpRow): DumpRow {
  const out: DumpRow = {};
  for (const column of table.columns) {
    const value = row[column] ?? null;
    if (value !== null && table.binary?.includes(column))
      out[column] = Buffer.from(value as Uint8Array).toString('base64');
    else if (value !== null && table.boolean?.includes(column)) out[column] = value === true || value === 1;
    else out[column] = value;
  }
  return out;
}

/** A row of the dump, checked against its table, with bytes back as Buffers (flags stay booleans). */
export function decodeRow(table: DumpTable, row: unknown, line: number): DumpRow {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    throw new Error(`line ${line}: a ${table.name} row must be an object`);
  }
  const keys = Object.keys(row);
  const unknown = keys.filter((k) => !table.columns.includes(k));
  const missing = table.columns.filter((c) => !keys.includes(c));
  if (unknown.length > 0 || missing.length > 0) {
    throw new Error(
      `line ${line}: a ${table.name} row has ${[
        ...unknown.map((k) => `an unknown column ${k}`),
        ...missing.map((c) => `no ${c}`),
      ].join(', ')}`,
    );
  }
  const out: DumpRow = {};
  for (const column of table.columns) {
    const value = (row as DumpRow)[column];
    out[column] = value !== null && table.binary?.includes(column) ? Buffer.from(value as string, 'base64') : value;
  }
  return out;
}
