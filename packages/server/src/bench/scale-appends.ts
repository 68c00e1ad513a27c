/**
 * Durable appends/s at 50 connections: Bubble on PostgreSQL with one, two and three instances
 * behind one database, against raw `pg` group-committing the same rows in one process (no HTTP)
 * and Bubble on SQLite, all in the same run, in rounds that take every setup in turn.
 *
 * Each connection appends to its own thread (50 threads): threads are what instances can write in
 * parallel (a thread's appends are ordered under its row lock, so one thread cannot go faster
 * with more instances). With several instances the connections are split evenly over them, as a
 * load balancer would; the threads of one instance's connections are not written by another's.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { PgAppendJob, PgAppendResult } from './baseline-pg-append.js';
import type { LoadJob, LoadResult } from './raw-http-load.js';
import { median, type Figure } from './bench-report.js';
import { cpuMs, stopProcess, Worker } from './bench-processes.js';
import { BENCH_HUMANS, createThread, startBubble, type Bubble } from './bench-bubble.js';
import { log, serverBin, worker } from './bench-common.js';
import { createBenchDatabase, createPgHumans, startPgBubbles, stopAll } from './scale-cluster.js';

export const SCALE_CONNECTIONS = 50;
const WARMUP_MS = 1_000;
const DURATION_MS = 5_000;
const ROUNDS = 3;
const SECTION = 'Durable appends, 50 connections (one thread each)';

const APPEND_BODIES = Array.from({ length: BENCH_HUMANS }, (_, i) =>
  JSON.stringify({
    type: 'message_part',
    data: {
      runId: `bench-run-${String(i).padStart(2, '0')}`,
      chunk: { type: 'text-delta', id: 't1', delta: 'lorem ipsum ' },
    },
  }),
);

type Setup =
  | 'raw pg'
  | 'raw pg x2'
  | 'raw pg x2, notify in tx'
  | 'raw pg x2, notify after'
  | 'sqlite'
  | 'pg x1'
  | 'pg x2'
  | 'pg x3';
const SETUPS: readonly Setup[] = [
  'raw pg',
  'sqlite',
  'pg x1',
  'pg x2',
  'pg x3',
  'raw pg x2',
  'raw pg x2, notify in tx',
  'raw pg x2, notify after',
];

/** Raw pg writers side by side, the clients split over them; appends/s of all together. */
async function rawPg(databaseUrl: string, writers: number, notify: PgAppendJob['notify']): Promise<Round> {
  const results = await Promise.all(
    split(Array.from({ length: SCALE_CONNECTIONS }), writers).map((share) =>
      new Worker<PgAppendJob>(worker('baseline-pg-append'), {
        databaseUrl,
        clients: share.length,
        warmupMs: WARMUP_MS,
        durationMs: DURATION_MS,
        notify,
      }).next<PgAppendResult>(),
    ),
  );
  return { perSecond: results.reduce((sum, r) => sum + r.committed / (r.measuredMs / 1000), 0), failed: 0 };
}

interface Round {
  perSecond: number;
  /** Server CPU per append, µs (all instances together); undefined for the raw baseline. */
  cpuPerAppend?: number;
  failed: number;
}

/** Splits `items` into `parts` runs as even as can be, in order. */
function split<T>(items: readonly T[], parts: number): T[][] {
  return Array.from({ length: parts }, (_, i) =>
    items.slice(Math.floor((i * items.length) / parts), Math.floor(((i + 1) * items.length) / parts)),
  );
}

async function loadOver(bubbles: readonly Bubble[], threadIds: readonly string[]): Promise<Round> {
  const shares = split(threadIds, bubbles.length);
  const pids = bubbles.map((b) => b.child.pid ?? 0);
  const cpuBefore = await Promise.all(pids.map(cpuMs));
  const results = await Promise.all(
    bubbles.map((bubble, i) =>
      new Worker<LoadJob>(worker('raw-http-load'), {
        host: bubble.host,
        port: bubble.port,
        paths: shares[i]!.map((id) => `/v1/threads/${id}/events`),
        tokens: bubble.tokens,
        bodies: APPEND_BODIES,
        connections: shares[i]!.length,
        warmupMs: WARMUP_MS,
        durationMs: DURATION_MS,
      }).next<LoadResult>(),
    ),
  );
  const cpuAfter = await Promise.all(pids.map(cpuMs));
  const cpu = cpuAfter.reduce((sum, after, i) => sum + after - cpuBefore[i]!, 0);
  const answered = results.reduce((sum, r) => sum + r.answered, 0);
  return {
    perSecond: results.reduce((sum, r) => sum + r.ok, 0) / (DURATION_MS / 1000),
    cpuPerAppend: (cpu * 1000) / Math.max(1, answered),
    failed: results.reduce((sum, r) => sum + r.failed + r.socketErrors, 0),
  };
}

export async function scaleAppendFigures(adminUrl: string, root: string, notes: string[]): Promise<Figure[]> {
  const db = await createBenchDatabase(adminUrl, 'appends');
  const raw = await createBenchDatabase(adminUrl, 'raw');
  const rounds = new Map<Setup, Round[]>(SETUPS.map((setup) => [setup, []]));
  let sqlite: Bubble | undefined;
  try {
    const tokens = await createPgHumans(db.url);
    sqlite = await startBubble(serverBin, await mkdtemp(join(root, 'scale-sqlite-')), 'on');
    const threads = { sqlite: [] as string[], pg: [] as string[] };
    const [first] = await startPgBubbles(serverBin, db.url, tokens, 1);
    try {
      for (let i = 0; i < SCALE_CONNECTIONS; i += 1) {
        threads.sqlite.push((await createThread(sqlite, `scale appends #${i}`)).threadId);
        threads.pg.push((await createThread(first!, `scale appends #${i}`)).threadId);
      }
    } finally {
      await stopAll([first!]);
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      // Every round takes the setups in another order, so the drift of a shared machine favours none.
      const order = SETUPS.map((_, i) => SETUPS[(i + round) % SETUPS.length]!);
      for (const setup of order) {
        let result: Round;
        if (setup === 'raw pg') {
          result = await rawPg(raw.url, 1, 'none');
        } else if (setup === 'raw pg x2') {
          result = await rawPg(raw.url, 2, 'none');
        } else if (setup === 'raw pg x2, notify in tx') {
          result = await rawPg(raw.url, 2, 'in-transaction');
        } else if (setup === 'raw pg x2, notify after') {
          result = await rawPg(raw.url, 2, 'after-commit');
        } else if (setup === 'sqlite') {
          result = await loadOver([sqlite], threads.sqlite);
        } else {
          const instances = await startPgBubbles(serverBin, db.url, tokens, Number(setup.slice(-1)));
          try {
            result = await loadOver(instances, threads.pg);
          } finally {
            await stopAll(instances);
          }
        }
        rounds.get(setup)!.push(result);
        log(`scale appends, round ${round + 1}, ${setup}: ${Math.round(result.perSecond)}/s`);
      }
    }
  } finally {
    if (sqlite) await stopProcess(sqlite.child);
    await db.drop();
    await raw.drop();
  }

  const rate = (setup: Setup) => median(rounds.get(setup)!.map((r) => r.perSecond));
  const perRound = (setup: Setup) =>
    rounds
      .get(setup)!
      .map((r) => Math.round(r.perSecond))
      .join(' / ');
  const cpu = (setup: Setup) => {
    const values = rounds.get(setup)!.flatMap((r) => (r.cpuPerAppend === undefined ? [] : [r.cpuPerAppend]));
    return values.length === 0 ? '' : `, server CPU ${median(values).toFixed(0)} µs per append (median, all instances)`;
  };
  const failures = (setup: Setup) => {
    const failed = rounds.get(setup)!.reduce((sum, r) => sum + r.failed, 0);
    return failed > 0 ? `; ${failed} failed requests` : '';
  };
  const note = (a: Setup, b: Setup) =>
    `median of ${ROUNDS} rounds; per round ${a} ${perRound(a)}${cpu(a)}; ${b} ${perRound(b)}${cpu(b)} /s${failures(a)}`;
  const figure = (name: string, ours: Setup, base: Setup, target?: { text: string; factor: number }): Figure => {
    const f: Figure = {
      section: SECTION,
      name,
      unit: '/s',
      bubble: rate(ours),
      baseline: rate(base),
      better: 'higher',
      note: note(ours, base),
    };
    if (target !== undefined) {
      f.target = target.text;
      f.meetsTarget = f.bubble >= target.factor * f.baseline;
    }
    return f;
  };
  notes.push(
    `Appends: closed loop, one \`message_part\` text-delta event per POST on keep-alive connections (raw HTTP/1.1 client, one process per instance), ` +
      `${SCALE_CONNECTIONS} connections each on its own thread, split evenly over the instances; tokens of ${BENCH_HUMANS} humans in turn; ` +
      `rate limits on (the defaults); ${WARMUP_MS / 1000} s warm-up, ${DURATION_MS / 1000} s measured, ${ROUNDS} rounds, each setup once per round in a rotating order. ` +
      'Raw pg: the same rows (event insert, thread head moved under its row lock) from 50 closed-loop writers in one process, group-committed one transaction at a time on one connection, no HTTP, ' +
      "five round trips per group (BEGIN, lock, insert, head update, COMMIT), each sent after the previous one's answer; Bubble's store pipelines its connection: one round trip per group while groups follow one another (`postgres-group-commit.ts`). " +
      'Instances are started for their scenario and stopped after it, so an idle one never shares the CPUs. ' +
      'The raw pg rows with two writers put the same 50 writers in two processes of 25; the two with NOTIFY send one `pg_notify` per group as Bubble sends its cluster hint, ' +
      'either inside the transaction (as the store does now) or on a second connection right after COMMIT: PostgreSQL holds a database-wide lock from a ' +
      "NOTIFYing transaction's pre-commit until its commit record is flushed, so such commits never share a flush across connections; their baseline is the same two writers without NOTIFY.",
  );
  return [
    figure('Bubble, one instance on PostgreSQL (baseline: raw pg)', 'pg x1', 'raw pg', {
      text: '>= 0.5x raw pg',
      factor: 0.5,
    }),
    figure('Bubble, two instances on one PostgreSQL (baseline: one instance)', 'pg x2', 'pg x1', {
      text: '>= 1.3x one instance',
      factor: 1.3,
    }),
    figure('Bubble, three instances (baseline: two)', 'pg x3', 'pg x2'),
    figure('Bubble, one instance on PostgreSQL (baseline: Bubble on SQLite)', 'pg x1', 'sqlite'),
    figure('raw pg, two writers (baseline: raw pg, one writer)', 'raw pg x2', 'raw pg'),
    figure(
      'raw pg, two writers, a NOTIFY inside each transaction (baseline: raw pg, two writers without)',
      'raw pg x2, notify in tx',
      'raw pg x2',
    ),
    figure(
      'raw pg, two writers, a NOTIFY right after each COMMIT (baseline: raw pg, two writers without)',
      'raw pg x2, notify after',
      'raw pg x2',
    ),
  ];
}
