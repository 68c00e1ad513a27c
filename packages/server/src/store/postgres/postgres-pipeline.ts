import type pg from 'pg';

/** One statement of a pipeline; `name` makes it a prepared statement on its connection (see {@link preparedName}). */
export interface Statement {
  sql: string;
  params?: readonly unknown[];
  name?: string | undefined;
}

/**
 * Sends every statement at once on a connection opened with `pipeline: true` (the group-commit
 * writer's) and waits for every answer: one round trip instead of one per statement, in one
 * write to the socket. PostgreSQL runs them in order; after a failure inside a transaction the
 * ones behind it fail too (25P02), and a COMMIT behind it answers ROLLBACK, so the first failure,
 * in statement order, is the one thrown (after all have settled, so none is left unhandled).
 */
export async function sendAll(client: pg.Client, statements: readonly Statement[]): Promise<pg.QueryResult[]> {
  const stream = client.connection?.stream;
  stream?.cork();
  let sent: Array<Promise<pg.QueryResult>>;
  try {
    sent = statements.map((s) =>
      s.params === undefined && s.name === undefined
        ? client.query(s.sql)
        : client.query({
            text: s.sql,
            values: s.params as unknown[],
            ...(s.name === undefined ? {} : { name: s.name }),
          }),
    );
  } finally {
    stream?.uncork();
  }
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value);
}

const names = new Map<string, string>();
/** Past this many statement texts, new ones go unprepared: the writer's texts are a small fixed set, this only bounds a mistake. */
const MAX_PREPARED = 64;

/**
 * A name for a statement the writer sends with every group, so PostgreSQL parses and plans it
 * once per connection rather than on every commit. One name per text, for the life of the
 * process: a name is never reused for another text (the driver refuses that).
 */
export function preparedName(sql: string): string | undefined {
  let name = names.get(sql);
  if (name === undefined) {
    if (names.size >= MAX_PREPARED) return undefined;
    name = `bubble_w${names.size + 1}`;
    names.set(sql, name);
  }
  return name;
}
