/**
 * Growth benches, reads (issue #19): the newest page and a middle page of a small and a large
 * thread over HTTP, and the backlog replay of each over a WebSocket subscription from seq 0.
 *
 * Two Bubble servers (limits off), each on its own data folder: one holding a thread of
 * `smallEvents` events, one a thread of `bigEvents` (so the large case's database file is large
 * too, not only its thread). Both are filled through the store before they start
 * (`growth-seed.ts`). Baselines: bare `http`/`ws` over better-sqlite3 on the same files
 * (`baseline-sqlite-server.ts`), measured in the same run, turn about with Bubble.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DATABASE_FILE_NAME } from '../create-bubble-server.js';
import { toEnvelope, type EventRow } from '../store/sqlite/sqlite-rows.js';
import type { GetLatencyJob, GetLatencyResult, GetTarget } from './http-get-latency.js';
import type { ReplayJob, ReplayResult } from './backlog-replay.js';
import { profiling, type GrowthOptions } from './growth-options.js';
import { median, type Figure, type GrowthRow } from './bench-report.js';
import { cpuMs, stopProcess, Worker, type StartedServer } from './bench-processes.js';
import { startBubble, type Bubble } from './bench-bubble.js';
import { log, serverBin, startBaseline, worker } from './bench-common.js';
import { seedLongThread } from './growth-seed.js';

const PAGE = 50;
const READ_WARMUP = 200;
const READ_TURNS = 10;
const READ_PER_TURN = 100;
/** Replays of the small thread per side (each is a few milliseconds; the median is kept). */
const SMALL_REPLAYS = 5;
export const READS_SECTION = 'Growth: reads of a long thread (GET …/events, 50 events a page)';
export const REPLAY_SECTION = 'Growth: backlog replay (one WebSocket subscribes from seq 0)';

export interface GrowthPart {
  figures: Figure[];
  rows: GrowthRow[];
}

interface Side {
  label: string;
  events: number;
  bubble: Bubble;
  threadId: string;
  baseline: StartedServer & { host: string; port: number };
  dbFile: string;
}

const count = (n: number): string => n.toLocaleString('en-US');

async function startSide(root: string, label: string, events: number, options: GrowthOptions): Promise<Side> {
  const dataDir = await mkdtemp(join(root, `growth-${label}-`));
  let threadId = '';
  const startedAt = performance.now();
  const bubble = await startBubble(serverBin, dataDir, 'off', {
    seed: async (store) => {
      threadId = await seedLongThread(store, `${label} thread`, events);
    },
    nodeArgs: profiling(options),
  });
  log(
    `growth: ${count(events)}-event thread written through the store in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
  );
  const dbFile = join(dataDir, DATABASE_FILE_NAME);
  const baseline = await startBaseline('baseline-sqlite-server', [dbFile]);
  return { label, events, bubble, threadId, baseline, dbFile };
}

function targets(side: Side): GetTarget[] {
  const path = (query: string) => `/v1/threads/${side.threadId}/events?${query}&limit=${PAGE}`;
  const tail = path(`before=${side.events + 1}`);
  const middle = path(`after=${Math.floor(side.events / 2)}`);
  const { host, port, token } = side.bubble;
  const base = side.baseline;
  return [
    { name: `bubble tail ${side.label}`, host, port, token, path: tail },
    { name: `baseline tail ${side.label}`, host: base.host, port: base.port, path: tail },
    { name: `bubble middle ${side.label}`, host, port, token, path: middle },
    { name: `baseline middle ${side.label}`, host: base.host, port: base.port, path: middle },
  ];
}

async function replayOnce(side: Side, on: 'bubble' | 'baseline'): Promise<ReplayResult & { serverCpu: number }> {
  const server = on === 'bubble' ? side.bubble : side.baseline;
  const pid = server.child.pid ?? 0;
  const cpuBefore = await cpuMs(pid);
  const job: ReplayJob = {
    wsUrl: `${server.url.replace('http', 'ws')}/v1/ws`,
    ...(on === 'bubble' ? { token: side.bubble.token } : {}),
    threadId: side.threadId,
    afterSeq: 0,
    expected: side.events,
    timeoutMs: Math.max(60_000, side.events / 5),
  };
  const result = await new Worker<ReplayJob>(worker('backlog-replay'), job).next<ReplayResult>(job.timeoutMs + 10_000);
  const serverCpu = ((await cpuMs(pid)) - cpuBefore) / result.totalMs;
  if (!result.inOrder) throw new Error(`${on} replay of ${side.label}: seqs out of order`);
  return { ...result, serverCpu };
}

/** The rows of the large thread read in pages of 100 and serialized as frames, in this process, nothing sent: for scale. */
function rawReadRate(side: Side): number {
  const db = new Database(side.dbFile, { readonly: true, fileMustExist: true });
  try {
    const page = db.prepare(
      'SELECT thread_id, seq, event_id, type, principal_id, data, client_event_id, created_at FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT 100',
    );
    const startedAt = performance.now();
    let last = 0;
    let bytes = 0;
    for (;;) {
      const rows = page.all(side.threadId, last) as EventRow[];
      if (rows.length === 0) break;
      for (const row of rows) bytes += `{"type":"event","id":"s","event":${JSON.stringify(toEnvelope(row))}}`.length;
      last = (rows[rows.length - 1] as EventRow).seq;
    }
    if (bytes === 0) throw new Error('no rows');
    return (last / (performance.now() - startedAt)) * 1000;
  } finally {
    db.close();
  }
}

export async function growthReadFigures(root: string, notes: string[], options: GrowthOptions): Promise<GrowthPart> {
  const sides: Side[] = [];
  try {
    sides.push(await startSide(root, 'small', options.smallEvents, options));
    sides.push(await startSide(root, 'large', options.bigEvents, options));
    const [small, large] = sides as [Side, Side];

    const reads = await new Worker<GetLatencyJob>(worker('http-get-latency'), {
      targets: [...targets(small), ...targets(large)],
      warmup: READ_WARMUP,
      turns: READ_TURNS,
      perTurn: READ_PER_TURN,
    }).next<GetLatencyResult>(300_000);
    for (const [name, r] of Object.entries(reads))
      log(
        `growth read ${name}: p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} max ${r.max.toFixed(1)} ms (${r.bodyBytes} bytes)`,
      );

    const smallReplays = { bubble: [] as ReplayResult[], baseline: [] as ReplayResult[] };
    for (let i = 0; i < SMALL_REPLAYS; i += 1) {
      for (const on of i % 2 === 0 ? (['bubble', 'baseline'] as const) : (['baseline', 'bubble'] as const))
        smallReplays[on].push(await replayOnce(small, on));
    }
    const largeReplays = {
      bubble: [] as Array<ReplayResult & { serverCpu: number }>,
      baseline: [] as Array<ReplayResult & { serverCpu: number }>,
    };
    for (let round = 0; round < options.rounds; round += 1) {
      for (const on of round % 2 === 0 ? (['bubble', 'baseline'] as const) : (['baseline', 'bubble'] as const)) {
        const r = await replayOnce(large, on);
        largeReplays[on].push(r);
        log(
          `growth replay ${count(large.events)} events, round ${round + 1}, ${on}: ${Math.round(r.eventsPerSecond)} events/s ` +
            `(${(r.totalMs / 1000).toFixed(1)} s, first event after ${r.firstEventMs.toFixed(1)} ms, server CPU ${(r.serverCpu * 100).toFixed(0)}%)`,
        );
      }
    }
    const raw = rawReadRate(large);
    log(
      `growth: raw better-sqlite3 read + serialize of ${count(large.events)} rows in this process: ${Math.round(raw)} rows/s`,
    );

    return report(small, large, reads, smallReplays, largeReplays, raw, notes, options);
  } finally {
    for (const side of sides) {
      await stopProcess(side.bubble.child);
      await stopProcess(side.baseline.child);
    }
  }
}

function report(
  small: Side,
  large: Side,
  reads: GetLatencyResult,
  smallReplays: { bubble: ReplayResult[]; baseline: ReplayResult[] },
  largeReplays: {
    bubble: Array<ReplayResult & { serverCpu: number }>;
    baseline: Array<ReplayResult & { serverCpu: number }>;
  },
  raw: number,
  notes: string[],
  options: GrowthOptions,
): GrowthPart {
  const read = (name: string) => reads[name] as GetLatencyResult[string];
  const figures: Figure[] = [];
  const rows: GrowthRow[] = [];
  const sizeOf = (side: Side) => `${count(side.events)} events`;
  for (const page of ['tail', 'middle'] as const) {
    for (const key of ['p50', 'p99'] as const) {
      for (const side of [small, large]) {
        const ours = read(`bubble ${page} ${side.label}`);
        const base = read(`baseline ${page} ${side.label}`);
        figures.push({
          section: READS_SECTION,
          name: `${page === 'tail' ? 'newest page' : 'middle page'} ${key}, ${sizeOf(side)}`,
          unit: 'ms',
          bubble: ours[key],
          baseline: base[key],
          better: 'lower',
          ...(key === 'p99'
            ? {
                note: `${ours.count} reads each; max bubble ${ours.max.toFixed(1)} ms, baseline ${base.max.toFixed(1)} ms; ${ours.bodyBytes} bytes a page`,
              }
            : {}),
        });
      }
      const smallValue = read(`bubble ${page} small`)[key];
      const largeValue = read(`bubble ${page} large`)[key];
      const row: GrowthRow = {
        name: `${page === 'tail' ? 'newest page (tail read)' : 'middle page'} ${key}`,
        unit: 'ms',
        small: { label: sizeOf(small), value: smallValue },
        large: { label: sizeOf(large), value: largeValue },
        baseline: { label: 'bare http + SQLite, same file', value: read(`baseline ${page} large`)[key] },
        better: 'lower',
      };
      if (page === 'tail') {
        row.target = 'large <= 1.5x small';
        row.meetsTarget = largeValue <= 1.5 * smallValue;
      }
      rows.push(row);
    }
  }
  const rates = (results: ReplayResult[]) => results.map((r) => r.eventsPerSecond);
  const ourLarge = median(rates(largeReplays.bubble));
  const baseLarge = median(rates(largeReplays.baseline));
  const ourSmall = median(rates(smallReplays.bubble));
  const perRound = (results: ReplayResult[]) => results.map((r) => Math.round(r.eventsPerSecond)).join(' / ');
  const cpu = (results: Array<ReplayResult & { serverCpu: number }>) =>
    results
      .map(
        (r) =>
          `${(r.serverCpu * 100).toFixed(0)}% (${((r.serverCpu * r.totalMs * 1000) / r.events).toFixed(1)} µs an event)`,
      )
      .join(' / ');
  figures.push(
    {
      section: REPLAY_SECTION,
      name: `events/s until caught up, ${sizeOf(large)}`,
      unit: '/s',
      bubble: ourLarge,
      baseline: baseLarge,
      better: 'higher',
      note:
        `median of ${options.rounds} rounds; per round bubble ${perRound(largeReplays.bubble)}, baseline ${perRound(largeReplays.baseline)} /s; ` +
        `server CPU bubble ${cpu(largeReplays.bubble)}, baseline ${cpu(largeReplays.baseline)} of a core; ` +
        `first event after ${largeReplays.bubble.map((r) => r.firstEventMs.toFixed(1)).join(' / ')} ms (bubble); every seq in order, none missing`,
    },
    {
      section: REPLAY_SECTION,
      name: `events/s until caught up, ${sizeOf(small)}`,
      unit: '/s',
      bubble: ourSmall,
      baseline: median(rates(smallReplays.baseline)),
      better: 'higher',
      note: `median of ${SMALL_REPLAYS}; the subscribe round trip is part of so short a replay (bubble ${median(smallReplays.bubble.map((r) => r.totalMs)).toFixed(1)} ms in all)`,
    },
  );
  rows.push({
    name: 'backlog replay rate',
    unit: 'events/s',
    small: { label: sizeOf(small), value: ourSmall },
    large: { label: sizeOf(large), value: ourLarge },
    baseline: { label: 'bare ws + SQLite, same file', value: baseLarge },
    better: 'higher',
  });
  notes.push(
    `Growth, reads: two Bubble servers (rate limits off), one on a data folder holding one ${count(small.events)}-event thread, one on a folder holding ` +
      `one ${count(large.events)}-event thread (${Math.round(large.events / 1000)}k text deltas of a bare-delta run), each filled before it started through the store's own ` +
      `\`appendEvents\` in batches of 500 on that same file (the rows a server writes, without the HTTP in front). ` +
      `The newest page is \`GET /v1/threads/:id/events?before=<head + 1>&limit=${PAGE}\` (what the web UI reads first), the middle page \`?after=<head / 2>&limit=${PAGE}\`; ` +
      `one keep-alive connection per target in one client process, one request at a time, ${READ_WARMUP} untimed, then ${READ_TURNS} turns of ${READ_PER_TURN} per target, ` +
      'the targets in turn (alternating order), so every figure and its baseline share the same moments. ' +
      'Baseline: bare `http` + better-sqlite3 on the same file with the same SQL and row mapping, no authentication or access check (`baseline-sqlite-server.ts`).',
    `Growth, backlog replay: one WebSocket (raw client, its own process) subscribes with \`afterSeq: 0\` and reads until it holds every event, checking each seq is the last plus 1; ` +
      'events / (time from the subscribe frame to the last event). Baseline: bare `ws` over better-sqlite3 on the same file, reading 100 events a page as Bubble does ' +
      'and writing each page in one corked burst, pausing past 2 MiB queued. ' +
      `For scale: reading the same ${count(large.events)} rows in pages of 100 and serializing each as a frame, in the bench's own process with nothing sent, ran at ${count(Math.round(raw))} rows/s.`,
  );
  return { figures, rows };
}
