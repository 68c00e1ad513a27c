/**
 * `npm run bench:server`: measures the real Bubble server against bare
 * baselines in the same run and writes BENCHMARKS.md at the repo root.
 * A script, not a test: it prints figures and never fails on a missed target.
 *
 * 1. Durable appends/s of small `message_part` (bare text-delta) events from
 *    closed-loop HTTP connections; baseline: bare `http` + better-sqlite3,
 *    WAL + synchronous=FULL, with the same group commit (one transaction per
 *    event-loop turn).
 * 2. Fan-out latency (append sent -> event frame received) at 1, 10, 100
 *    subscribers on one thread at 1,000 events/s; baseline: bare `ws`
 *    broadcasting one frame per event.
 * 3. RSS per idle authenticated WebSocket; baseline: bare `ws`.
 * 4. Growth (issue #19): reads at the tail and in the middle of a 1,000- and a 1,000,000-event
 *    thread, the backlog replay rate, fan-out at 1,000 subscribers on one thread and at 10,000
 *    connections over 1,000 threads, each at a small and a large size, as one growth table;
 *    baselines: bare `http`/`ws` over SQLite on the same files, bare `ws` fan-out. Sizes from
 *    `BENCH_*` environment variables (growth-options.ts); limits off.
 *
 * Bubble runs twice, rate limits off and on (the defaults, as shipped), back
 * to back in every scenario and round, so the on/off ratio is read against the
 * same moment of this noisy machine; `--limits on|off` measures one only.
 * The load is spread over BENCH_HUMANS people (see bench-bubble.ts).
 *
 * Sections: append-figures.ts, fanout-figures.ts, memory below, growth-reads.ts and growth-fanout.ts.
 *
 * Every loop is bounded in count and time; the whole run takes about thirteen minutes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdleJob } from './idle-connections.js';
import {
  benchmarksMarkdown,
  consoleTable,
  growthConsoleTable,
  mergeBenchmarksFile,
  type Figure,
  type GrowthRow,
  type GrowthSection,
} from './bench-report.js';
import { rssKiB, runCommand, sleep, stopProcess, Worker, type StartedServer } from './bench-processes.js';
import { limitsFromArgs, startBubble, type Limits } from './bench-bubble.js';
import { appendFigures, httpCeiling } from './append-figures.js';
import { fanoutFigures } from './fanout-figures.js';
import { log, named, repoRoot, serverBin, startBaseline, worker } from './bench-common.js';
import { atIssueSizes, growthOptionsFromEnv, type GrowthOptions } from './growth-options.js';
import { growthReadFigures, READS_SECTION, REPLAY_SECTION } from './growth-reads.js';
import { FANOUT_SECTION, growthFanoutFigures } from './growth-fanout.js';

const IDLE_CONNECTIONS = 1_000;

async function idleRss(server: StartedServer & { port?: number }, wsUrl: string, token: string): Promise<number> {
  const pid = server.child.pid;
  if (pid === undefined) throw new Error('no pid');
  // Warm up: accept and drop a batch first so the measured delta is connections, not code warming up.
  const warm = new Worker<IdleJob>(worker('idle-connections'), { wsUrl, token, connections: 100 });
  await warm.next();
  warm.send('close');
  await warm.stop();
  await sleep(1_500);
  const before = await rssKiB(pid);
  const idle = new Worker<IdleJob>(worker('idle-connections'), { wsUrl, token, connections: IDLE_CONNECTIONS });
  try {
    await idle.next();
    await sleep(1_500);
    const after = await rssKiB(pid);
    return (after - before) / IDLE_CONNECTIONS;
  } finally {
    idle.send('close');
    await idle.stop();
  }
}

async function memoryFigures(root: string, notes: string[], modes: readonly Limits[]): Promise<Figure[]> {
  const ours = new Map<Limits, number>();
  for (const limits of modes) {
    const bubble = await startBubble(serverBin, await mkdtemp(join(root, `memory-${limits}-`)), limits);
    try {
      ours.set(limits, await idleRss(bubble, `${bubble.url.replace('http', 'ws')}/v1/ws`, bubble.token));
    } finally {
      await stopProcess(bubble.child);
    }
  }
  const baseline = await startBaseline('baseline-ws-server', []);
  let base: number;
  try {
    base = await idleRss(baseline, `${baseline.url.replace('http', 'ws')}/v1/ws`, 'baseline');
  } finally {
    await stopProcess(baseline.child);
  }
  log(
    `memory per idle socket: ${modes.map((limits) => `bubble (limits ${limits}) ${ours.get(limits)!.toFixed(1)} KiB`).join(', ')}, baseline ${base.toFixed(1)} KiB`,
  );
  notes.push(
    `Memory: server RSS after ${IDLE_CONNECTIONS} idle authenticated sockets minus RSS before (after a 100-socket warm-up), divided by ${IDLE_CONNECTIONS}; ` +
      'in KiB per connection (the same number is MiB per 1,024 connections). RSS includes not-yet-collected garbage, so it is an upper bound.',
  );
  return modes.map((limits) => ({
    section: 'Memory',
    name: named('RSS per idle authenticated WebSocket', limits, modes),
    unit: 'KiB',
    bubble: ours.get(limits)!,
    baseline: base,
    better: 'lower' as const,
    target: '<= 20 KiB',
    meetsTarget: ours.get(limits)! <= 20,
  }));
}

/** `limits on / limits off` for every figure measured both ways, as a note on its `limits on` row. */
function compareLimits(figures: Figure[], modes: readonly Limits[]): string[] {
  if (modes.length < 2) return [];
  const lines: string[] = [];
  for (const on of figures.filter((f) => f.name.endsWith(', limits on'))) {
    const base = on.name.slice(0, -', limits on'.length);
    const off = figures.find((f) => f.section === on.section && f.name === `${base}, limits off`);
    if (off === undefined) continue;
    const change = on.bubble / off.bubble;
    const line = `limits on / limits off: ${change.toFixed(3)}x (${on.better} is better)`;
    on.note = on.note === undefined ? line : `${line}; ${on.note}`;
    lines.push(`${on.section}: ${base}: ${line}`);
  }
  return lines;
}

const SECTIONS = ['appends', 'fanout', 'memory', 'growth-reads', 'growth-fanout'] as const;
type Section = (typeof SECTIONS)[number];

async function growthFigures(
  root: string,
  notes: string[],
  options: GrowthOptions,
  sections: readonly Section[],
): Promise<{ figures: Figure[]; growth: GrowthSection }> {
  const none = { figures: [], rows: [] };
  const reads = sections.includes('growth-reads') ? await growthReadFigures(root, notes, options) : none;
  const fanout = sections.includes('growth-fanout') ? await growthFanoutFigures(root, notes, options) : none;
  const rows: GrowthRow[] = [...reads.rows, ...fanout.rows];
  return {
    figures: [...reads.figures, ...fanout.figures],
    growth: {
      title: 'Growth (issue #19): small against large',
      intro:
        'Each figure at a small and a large size in the same run, its growth (large / small), and the baseline at the large size with the ratio to it; ' +
        'the sections below give every figure next to its baseline. Rate limits off in all of them (see the notes).',
      rows,
      sections: [READS_SECTION, REPLAY_SECTION, FANOUT_SECTION],
    },
  };
}

/** `--only fanout,memory` runs some sections and leaves BENCHMARKS.md alone; `growth` is both growth sections. */
function sectionsFromArgs(argv: string[]): Section[] {
  const at = argv.indexOf('--only');
  if (at < 0) return [...SECTIONS];
  const wanted = (argv[at + 1] ?? '')
    .split(',')
    .flatMap((name) => (name === 'growth' ? ['growth-reads', 'growth-fanout'] : [name]));
  const unknown = wanted.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown section(s) ${unknown.join(', ')}; expected ${SECTIONS.join(', ')}`);
  return wanted as Section[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const sections = sectionsFromArgs(process.argv.slice(2));
  const modes = limitsFromArgs(process.argv.slice(2));
  const growthOptions = growthOptionsFromEnv(process.env);
  const root = await mkdtemp(join(tmpdir(), 'bubble-bench-'));
  const notes: string[] = [];
  const figures: Figure[] = [];
  let growth: GrowthSection | undefined;
  try {
    if (sections.includes('appends')) {
      const probe = JSON.parse(await runCommand(process.execPath, [worker('fsync-probe'), root])) as {
        commitsPerSecond: number;
      };
      log(`disk: ${Math.round(probe.commitsPerSecond)} durable single-row commits/s`);
      notes.push(
        `This disk allowed ${Math.round(probe.commitsPerSecond).toLocaleString('en-US')} durable single-row SQLite commits/s (WAL, synchronous=FULL, one process, no HTTP) ` +
          'when the run started: the ceiling of a server that commits once per request; Bubble and the baseline both commit once per event-loop turn instead (group commit).',
      );
      figures.push(...(await appendFigures(root, notes, modes)));
      const ceiling = await httpCeiling();
      log(`http ceiling: ${Math.round(ceiling)} answers/s from a no-op server`);
      notes.push(
        `The same load generator against a no-op Node \`http\` server (no storage, 50 connections) got ${Math.round(ceiling).toLocaleString('en-US')} answers/s ` +
          'in this run: the ceiling of this machine for one-request-per-event appends, before any work is done.',
      );
    }
    if (sections.includes('fanout')) figures.push(...(await fanoutFigures(root, notes, modes)));
    if (sections.includes('memory')) figures.push(...(await memoryFigures(root, notes, modes)));
    if (sections.includes('growth-reads') || sections.includes('growth-fanout')) {
      const result = await growthFigures(root, notes, growthOptions, sections);
      figures.push(...result.figures);
      growth = result.growth;
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const cpuList = cpus();
  const machine = {
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown CPU',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0 },
  };
  const comparisons = compareLimits(figures, modes);
  if (modes.length === 2) {
    notes.push(
      'Rate limits: every Bubble figure is measured twice, on a server with its rate limits off (`--rate-limit off --frame-rate-limit off --failed-auth-limit off`) ' +
        'and on one with the defaults (on), back to back in alternating order; the `limits on` row carries the ratio of the two.',
    );
  } else notes.push(`Rate limits: ${modes[0]} for every Bubble figure.`);
  notes.push(`Whole run took ${Math.round((Date.now() - started) / 1000)} s.`);
  process.stdout.write(`${consoleTable(figures)}\n`);
  if (comparisons.length > 0) process.stdout.write(`\n${comparisons.join('\n')}\n`);
  if (growth !== undefined) process.stdout.write(`\n${growth.title}\n${growthConsoleTable(growth.rows)}\n`);
  process.stdout.write(
    `load average (1 min) at start / end: ${machine.loadAverage.start.toFixed(2)} / ${machine.loadAverage.end.toFixed(2)} on ${machine.cpus} CPUs\n`,
  );
  if (sections.length < SECTIONS.length || modes.length < 2 || !atIssueSizes(growthOptions)) return;
  const benchmarksPath = join(repoRoot, 'BENCHMARKS.md');
  const current = await readFile(benchmarksPath, 'utf8').catch(() => null);
  await writeFile(benchmarksPath, mergeBenchmarksFile(current, benchmarksMarkdown(figures, machine, notes, growth)));
  process.stdout.write(`wrote ${join(repoRoot, 'BENCHMARKS.md')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
