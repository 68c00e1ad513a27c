/**
 * Baseline for the scale benchmark's appends (a child process): raw `pg` group-committing the
 * rows Bubble writes for an append (the event row, its thread's head moved under the row lock),
 * in one process, with no HTTP, no auth, no validation, no notification. `clients` closed-loop
 * writers each append to their own thread and wait for the commit before the next; the appends
 * that arrive while a group commits go together in the next one, one transaction at a time on
 * one connection, as Bubble's PostgreSQL store does. Only appends committed inside the measured
 * window count.
 *
 * Started with fork(); receives a `PgAppendJob`, answers a `PgAppendResult`.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export interface PgAppendJob {
  databaseUrl: string;
  clients: number;
  warmupMs: number;
  durationMs: number;
  /**
   * A `pg_notify` per group as Bubble sends its cluster hint: none (the default), inside the
   * transaction before COMMIT, or on a second connection right after it. PostgreSQL serializes the
   * commits of transactions that NOTIFY, flush to disk included, across every connection.
   */
  notify?: 'none' | 'in-transaction' | 'after-commit';
}

export interface PgAppendResult {
  committed: number;
  measuredMs: number;
  groups: number;
}

interface Pending {
  threadId: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS raw_threads (thread_id text PRIMARY KEY, head_seq bigint NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS raw_events (
    thread_id text NOT NULL, seq bigint NOT NULL, event_id text NOT NULL, type text NOT NULL,
    principal_id text NOT NULL, data text NOT NULL, client_event_id text, created_at text NOT NULL,
    PRIMARY KEY (thread_id, seq)
  )`;

const DATA = JSON.stringify({ runId: 'bench-run', chunk: { type: 'text-delta', id: 't1', delta: 'lorem ipsum ' } });

export async function runPgAppends(job: PgAppendJob): Promise<PgAppendResult> {
  const client = new pg.Client({ connectionString: job.databaseUrl });
  await client.connect();
  const notifier = job.notify === 'after-commit' ? new pg.Client({ connectionString: job.databaseUrl }) : null;
  await notifier?.connect();
  const payload = JSON.stringify({ heads: [{ threadId: 'raw', headSeq: 1 }] });
  await client.query(SCHEMA);
  const threads = Array.from({ length: job.clients }, (_, i) => `raw_${i}_${randomUUID().slice(0, 8)}`);
  await client.query('INSERT INTO raw_threads (thread_id) SELECT unnest($1::text[])', [threads]);

  let queue: Pending[] = [];
  let committing = false;
  let groups = 0;
  let notified: Promise<unknown> = Promise.resolve();
  /** One loop at a time: `committing` is set by whoever schedules it and cleared when the queue is empty. */
  const commitGroups = async (): Promise<void> => {
    while (queue.length > 0) {
      const group = queue;
      queue = [];
      try {
        await client.query('BEGIN');
        const ids = [...new Set(group.map((p) => p.threadId))].sort();
        const { rows } = await client.query<{ thread_id: string; head_seq: string }>(
          'SELECT thread_id, head_seq FROM raw_threads WHERE thread_id = ANY($1::text[]) ORDER BY thread_id FOR UPDATE',
          [ids],
        );
        const heads = new Map(rows.map((row) => [row.thread_id, Number(row.head_seq)]));
        const columns: unknown[][] = [[], [], [], [], [], [], [], []];
        const createdAt = new Date().toISOString();
        for (const { threadId } of group) {
          const seq = (heads.get(threadId) ?? 0) + 1;
          heads.set(threadId, seq);
          const values = [threadId, seq, `ev_${randomUUID()}`, 'message_part', 'bench', DATA, null, createdAt];
          values.forEach((value, i) => {
            columns[i]!.push(value);
          });
        }
        await client.query(
          `INSERT INTO raw_events (thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at)
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])`,
          columns,
        );
        await client.query(
          `UPDATE raw_threads t SET head_seq = v.head FROM unnest($1::text[], $2::bigint[]) AS v(thread_id, head)
           WHERE t.thread_id = v.thread_id`,
          [[...heads.keys()], [...heads.values()]],
        );
        if (job.notify === 'in-transaction') await client.query('SELECT pg_notify($1, $2)', ['bubble_bench', payload]);
        await client.query('COMMIT');
        if (notifier !== null) {
          // One per group, in order on its own connection, off the writer's path.
          notified = notified
            .then(() => notifier.query('SELECT pg_notify($1, $2)', ['bubble_bench', payload]))
            .catch(() => {});
        }
        groups += 1;
        for (const pending of group) pending.resolve();
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        for (const pending of group) pending.reject(error);
      }
    }
    committing = false;
  };
  const append = (threadId: string): Promise<void> =>
    new Promise((resolve, reject) => {
      queue.push({ threadId, resolve, reject });
      if (!committing) {
        committing = true;
        setImmediate(() => void commitGroups());
      }
    });

  const start = performance.now();
  const measureFrom = start + job.warmupMs;
  const stopAt = measureFrom + job.durationMs;
  let committed = 0;
  const groupsAtStart = { value: 0 };
  setTimeout(() => {
    groupsAtStart.value = groups;
  }, job.warmupMs).unref();
  await Promise.all(
    threads.map(async (threadId) => {
      while (performance.now() < stopAt) {
        await append(threadId);
        const now = performance.now();
        if (now >= measureFrom && now < stopAt) committed += 1;
      }
    }),
  );
  await notified;
  await client.end();
  await notifier?.end();
  return { committed, measuredMs: job.durationMs, groups: groups - groupsAtStart.value };
}

if (process.send !== undefined) {
  process.once('message', (job: PgAppendJob) => {
    runPgAppends(job).then(
      (result) => process.send?.(result, () => process.exit(0)),
      (error: unknown) => process.send?.({ error: String(error) }, () => process.exit(1)),
    );
  });
}
