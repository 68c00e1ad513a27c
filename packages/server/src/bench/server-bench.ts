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
 *
 * Every loop is bounded in count and time; the whole run takes about two minutes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FanoutJob, FanoutResult } from './fanout-subscribers.js';
import type { IdleJob } from './idle-connections.js';
import type { LoadJob, LoadResult } from './raw-http-load.js';
import type { PublishJob, PublishResult } from './fanout-publisher.js';
import type { JitterResult } from './jitter-probe.js';
import { benchmarksMarkdown, consoleTable, median, mergeBenchmarksFile, type Figure } from './bench-report.js';
import { cpuMs, freePort, httpJson, rssKiB, runCommand, sleep, startServer, stopProcess, Worker, type StartedServer } from './bench-processes.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../../..');
const serverBin = join(repoRoot, 'packages/server/bin/bubble-server.js');
const worker = (name: string): string => join(here, `${name}.js`);

const APPEND_WARMUP_MS = 1_000;
const APPEND_DURATION_MS = 5_000;
const FANOUT_RATE = 1_000;
const FANOUT_WARMUP_MS = 1_000;
const FANOUT_DURATION_MS = 5_000;
/** Rounds per subscriber count; each fan-out figure is the median of the rounds (one host stall skews one round). */
const FANOUT_ROUNDS = 3;
const IDLE_CONNECTIONS = 1_000;
const APPEND_BODY = JSON.stringify({
  type: 'message_part',
  data: { runId: 'bench-run', chunk: { type: 'text-delta', id: 't1', delta: 'lorem ipsum ' } },
});

interface Bubble extends StartedServer {
  token: string;
  host: string;
  port: number;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function startBubble(dataDir: string): Promise<Bubble> {
  const created = JSON.parse(await runCommand(process.execPath, [serverBin, 'principal', 'create-human', 'bench', '--data', dataDir])) as {
    token: { token: string };
  };
  const port = await freePort();
  const started = await startServer(process.execPath, [
    serverBin,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--data',
    dataDir,
    '--log-level',
    'warn',
  ]);
  return { ...started, token: created.token.token, host: '127.0.0.1', port };
}

async function startBaseline(file: string, args: string[]): Promise<StartedServer & { host: string; port: number }> {
  const started = await startServer(process.execPath, [worker(file), ...args]);
  const url = new URL(started.url);
  return { ...started, host: url.hostname, port: Number(url.port) };
}

async function createThread(bubble: Bubble, title: string): Promise<{ threadId: string; headSeq: number }> {
  const { thread } = await httpJson<{ thread: { threadId: string; headSeq: number } }>('POST', `${bubble.url}/v1/threads`, bubble.token, { title });
  return thread;
}

async function load(job: LoadJob): Promise<LoadResult> {
  const w = new Worker<LoadJob>(worker('raw-http-load'), job);
  return w.next<LoadResult>();
}

function perSecond(result: LoadResult): number {
  return result.ok / (result.measuredMs / 1000);
}

async function appendFigures(root: string, notes: string[]): Promise<Figure[]> {
  const bubble = await startBubble(await mkdtemp(join(root, 'appends-')));
  const baseline = await startBaseline('baseline-append-server', [await mkdtemp(join(root, 'baseline-appends-'))]);
  const figures: Figure[] = [];
  try {
    const scenarios = [
      { connections: 8, threads: 1 },
      { connections: 8, threads: 8 },
      { connections: 50, threads: 1 },
      { connections: 10, threads: 1 },
    ];
    for (const { connections, threads } of scenarios) {
      const ids: string[] = [];
      for (let i = 0; i < threads; i += 1) ids.push((await createThread(bubble, `appends ${connections}x${threads} #${i}`)).threadId);
      const common = { token: bubble.token, body: APPEND_BODY, connections, warmupMs: APPEND_WARMUP_MS, durationMs: APPEND_DURATION_MS };
      const ours = await load({ ...common, host: bubble.host, port: bubble.port, paths: ids.map((id) => `/v1/threads/${id}/events`) });
      const base = await load({
        ...common,
        host: baseline.host,
        port: baseline.port,
        paths: ids.map((_, i) => `/v1/threads/base_${connections}_${threads}_${i}/events`),
      });
      const name = `${connections} connections, ${threads === 1 ? 'one thread' : `${threads} threads`}`;
      const problems = [ours, base]
        .map((r, i) => (r.failed + r.socketErrors > 0 ? `${i === 0 ? 'bubble' : 'baseline'}: ${r.failed} failed (${r.firstFailure ?? '-'}), ${r.socketErrors} socket errors` : ''))
        .filter(Boolean);
      const figure: Figure = { section: 'Durable appends', name, unit: '/s', bubble: perSecond(ours), baseline: perSecond(base), better: 'higher' };
      if (connections === 50) {
        figure.target = '>= 10,000/s and >= 0.5x baseline';
        figure.meetsTarget = figure.bubble >= 10_000 && figure.bubble >= 0.5 * figure.baseline;
      }
      if (problems.length > 0) figure.note = problems.join('; ');
      figures.push(figure);
      log(`appends ${name}: bubble ${Math.round(figure.bubble)}/s, baseline ${Math.round(figure.baseline)}/s`);
    }
  } finally {
    await stopProcess(bubble.child);
    await stopProcess(baseline.child);
  }
  notes.push(
    `Appends: closed loop, one \`message_part\` text-delta event per POST on keep-alive connections (raw HTTP/1.1 client in its own process), ` +
      `${APPEND_WARMUP_MS / 1000} s warm-up then ${APPEND_DURATION_MS / 1000} s measured; only 2xx answers count. ` +
      'The 50- and 10-connection runs append to one thread (the hardest case for per-thread ordering).',
  );
  return figures;
}

/** Answers/s of the load generator against a server that does nothing (the baseline ws server's POST /publish with no sockets). */
async function httpCeiling(): Promise<number> {
  const noop = await startBaseline('baseline-ws-server', []);
  try {
    const result = await load({
      host: noop.host,
      port: noop.port,
      paths: ['/publish'],
      token: 'none',
      body: APPEND_BODY,
      connections: 50,
      warmupMs: APPEND_WARMUP_MS,
      durationMs: 3_000,
    });
    return perSecond(result);
  } finally {
    await stopProcess(noop.child);
  }
}

async function fanoutOnce(wsUrl: string, clients: number, bubble: FanoutJob['bubble'], publishTo: Omit<PublishJob, 'durationMs'>): Promise<FanoutResult> {
  const subscribers = new Worker<FanoutJob>(worker('fanout-subscribers'), { wsUrl, clients, ...(bubble ? { bubble } : {}) });
  try {
    await subscribers.next<{ ready: true }>();
    const warm = await new Worker<PublishJob>(worker('fanout-publisher'), { ...publishTo, durationMs: FANOUT_WARMUP_MS }).next<PublishResult>();
    if (warm.failed > 0) throw new Error(`warm-up appends failed: ${warm.firstFailure}`);
    await sleep(300);
    subscribers.send('reset');
    await subscribers.next<{ reset: true }>();
    const published = await new Worker<PublishJob>(worker('fanout-publisher'), { ...publishTo, durationMs: FANOUT_DURATION_MS }).next<PublishResult>();
    if (published.failed > 0) throw new Error(`appends failed: ${published.failed} (${published.firstFailure})`);
    await sleep(500);
    subscribers.send('stop');
    return await subscribers.next<FanoutResult>();
  } finally {
    await subscribers.stop();
  }
}

/** One round of one subscriber count: Bubble, then the baseline, with the host jitter probe running across both. */
interface FanoutRound {
  ours: FanoutResult;
  base: FanoutResult;
  jitter: JitterResult;
  /** CPU the Bubble server used during its part of the round, as a share of one core. */
  ourCpu: number;
}

async function fanoutRound(bubble: Bubble, baseline: StartedServer, clients: number): Promise<FanoutRound> {
  const thread = await createThread(bubble, `fanout ${clients}`);
  const jitterProbe = new Worker<Record<string, never>>(worker('jitter-probe'), {});
  await jitterProbe.next<{ ready: true }>();
  try {
    const pid = bubble.child.pid ?? 0;
    const cpuBefore = await cpuMs(pid);
    const startedAt = performance.now();
    const ours = await fanoutOnce(
      `${bubble.url.replace('http', 'ws')}/v1/ws`,
      clients,
      { token: bubble.token, threadId: thread.threadId, afterSeq: thread.headSeq },
      { url: `${bubble.url}/v1/threads/${thread.threadId}/events`, token: bubble.token, mode: 'bubble', ratePerSecond: FANOUT_RATE },
    );
    const ourCpu = ((await cpuMs(pid)) - cpuBefore) / (performance.now() - startedAt);
    const base = await fanoutOnce(`${baseline.url.replace('http', 'ws')}/v1/ws`, clients, undefined, {
      url: `${baseline.url}/publish`,
      mode: 'baseline',
      ratePerSecond: FANOUT_RATE,
    });
    jitterProbe.send('stop');
    return { ours, base, ourCpu, jitter: await jitterProbe.next<JitterResult>() };
  } finally {
    await jitterProbe.stop();
  }
}

async function fanoutFigures(root: string, notes: string[]): Promise<Figure[]> {
  const bubble = await startBubble(await mkdtemp(join(root, 'fanout-')));
  const baseline = await startBaseline('baseline-ws-server', []);
  const figures: Figure[] = [];
  const expected = (FANOUT_RATE * FANOUT_DURATION_MS) / 1000;
  const ms = (value: number): string => value.toFixed(1);
  try {
    for (const clients of [1, 10, 100]) {
      const rounds: FanoutRound[] = [];
      for (let round = 0; round < FANOUT_ROUNDS; round += 1) {
        const result = await fanoutRound(bubble, baseline, clients);
        rounds.push(result);
        log(
          `fan-out ${clients}, round ${round + 1}: bubble p50 ${result.ours.p50.toFixed(2)} p99 ${result.ours.p99.toFixed(2)} ms ` +
            `(createdAt to receipt p50 ${result.ours.fromCreatedAtP50.toFixed(0)} p99 ${result.ours.fromCreatedAtP99.toFixed(0)}); ` +
            `server CPU ${(result.ourCpu * 100).toFixed(0)}%; baseline p50 ${result.base.p50.toFixed(2)} p99 ${result.base.p99.toFixed(2)} ms; ` +
            `host jitter max ${ms(result.jitter.max)} ms, ${result.jitter.stallsOver10Ms} stalls >= 10 ms`,
        );
      }
      const delivery = (results: FanoutResult[]): string => {
        const min = Math.min(...results.map((r) => r.minPerClient));
        const max = Math.max(...results.map((r) => r.maxPerClient));
        const closes = results.reduce((sum, r) => sum + r.unexpectedCloses, 0);
        return (
          (min === expected && max === expected ? `all ${expected} events reached every client in every round` : `${min} to ${max} of ${expected} events per client`) +
          (closes > 0 ? `, ${closes} sockets closed` : '')
        );
      };
      for (const key of ['p50', 'p99'] as const) {
        const figure: Figure = {
          section: 'Fan-out latency (append to receipt, 1,000 events/s)',
          name: `${key}, ${clients} subscriber${clients === 1 ? '' : 's'}`,
          unit: 'ms',
          bubble: median(rounds.map((r) => r.ours[key])),
          baseline: median(rounds.map((r) => r.base[key])),
          better: 'lower',
        };
        if (key === 'p99' && clients === 100) {
          figure.target = '<= 15 ms';
          figure.meetsTarget = figure.bubble <= 15;
        }
        if (key === 'p99') {
          figure.note =
            `median of ${FANOUT_ROUNDS} rounds; p99 per round bubble ${rounds.map((r) => ms(r.ours.p99)).join(' / ')}, baseline ${rounds.map((r) => ms(r.base.p99)).join(' / ')} ms; ` +
            `bubble createdAt to receipt p99 ${rounds.map((r) => r.ours.fromCreatedAtP99.toFixed(0)).join(' / ')} ms; ` +
            `bubble server CPU ${rounds.map((r) => `${(r.ourCpu * 100).toFixed(0)}%`).join(' / ')} of a core; ` +
            `host jitter max ${rounds.map((r) => ms(r.jitter.max)).join(' / ')} ms; ` +
            `bubble: ${delivery(rounds.map((r) => r.ours))}; baseline: ${delivery(rounds.map((r) => r.base))}`;
        }
        figures.push(figure);
      }
    }
  } finally {
    await stopProcess(bubble.child);
    await stopProcess(baseline.child);
  }
  notes.push(
    `Fan-out: an open-loop publisher sends one event per POST at ${FANOUT_RATE}/s with its send time in the event; ` +
      `subscribers (one process) take receive time minus send time. ${FANOUT_WARMUP_MS / 1000} s warm-up discarded, ${FANOUT_DURATION_MS / 1000} s measured, ` +
      `${FANOUT_ROUNDS} rounds per subscriber count (Bubble then baseline in each), each figure the median of the rounds. ` +
      'Bubble latency includes the HTTP append, validation, the durable commit and the fan-out; the baseline only relays the POST body to its sockets. ' +
      'A p99 over 5,000 events at 1,000/s is the 50th-worst event, so one 30 ms stall of the machine (see host jitter: an idle process timing 1 ms timers during the round) ' +
      'puts about 30 ms into that round\'s p99 whatever the server does.',
  );
  return figures;
}

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

async function memoryFigures(root: string, notes: string[]): Promise<Figure[]> {
  const bubble = await startBubble(await mkdtemp(join(root, 'memory-')));
  let ours: number;
  try {
    ours = await idleRss(bubble, `${bubble.url.replace('http', 'ws')}/v1/ws`, bubble.token);
  } finally {
    await stopProcess(bubble.child);
  }
  const baseline = await startBaseline('baseline-ws-server', []);
  let base: number;
  try {
    base = await idleRss(baseline, `${baseline.url.replace('http', 'ws')}/v1/ws`, 'baseline');
  } finally {
    await stopProcess(baseline.child);
  }
  log(`memory per idle socket: bubble ${ours.toFixed(1)} KiB, baseline ${base.toFixed(1)} KiB`);
  notes.push(
    `Memory: server RSS after ${IDLE_CONNECTIONS} idle authenticated sockets minus RSS before (after a 100-socket warm-up), divided by ${IDLE_CONNECTIONS}; ` +
      'in KiB per connection (the same number is MiB per 1,024 connections). RSS includes not-yet-collected garbage, so it is an upper bound.',
  );
  return [
    {
      section: 'Memory',
      name: 'RSS per idle authenticated WebSocket',
      unit: 'KiB',
      bubble: ours,
      baseline: base,
      better: 'lower',
      target: '<= 20 KiB',
      meetsTarget: ours <= 20,
    },
  ];
}

const SECTIONS = ['appends', 'fanout', 'memory'] as const;
type Section = (typeof SECTIONS)[number];

/** `--only fanout,memory` runs some sections and leaves BENCHMARKS.md alone. */
function sectionsFromArgs(argv: string[]): Section[] {
  const at = argv.indexOf('--only');
  if (at < 0) return [...SECTIONS];
  const wanted = (argv[at + 1] ?? '').split(',');
  const unknown = wanted.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown section(s) ${unknown.join(', ')}; expected ${SECTIONS.join(', ')}`);
  return wanted as Section[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const sections = sectionsFromArgs(process.argv.slice(2));
  const root = await mkdtemp(join(tmpdir(), 'bubble-bench-'));
  const notes: string[] = [];
  const figures: Figure[] = [];
  try {
    if (sections.includes('appends')) {
      const probe = JSON.parse(await runCommand(process.execPath, [worker('fsync-probe'), root])) as { commitsPerSecond: number };
      log(`disk: ${Math.round(probe.commitsPerSecond)} durable single-row commits/s`);
      notes.push(
        `This disk allowed ${Math.round(probe.commitsPerSecond).toLocaleString('en-US')} durable single-row SQLite commits/s (WAL, synchronous=FULL, one process, no HTTP) ` +
          'when the run started: the ceiling of a server that commits once per request; Bubble and the baseline both commit once per event-loop turn instead (group commit).',
      );
      figures.push(...(await appendFigures(root, notes)));
      const ceiling = await httpCeiling();
      log(`http ceiling: ${Math.round(ceiling)} answers/s from a no-op server`);
      notes.push(
        `The same load generator against a no-op Node \`http\` server (no storage, 50 connections) got ${Math.round(ceiling).toLocaleString('en-US')} answers/s ` +
          'in this run: the ceiling of this machine for one-request-per-event appends, before any work is done.',
      );
    }
    if (sections.includes('fanout')) figures.push(...(await fanoutFigures(root, notes)));
    if (sections.includes('memory')) figures.push(...(await memoryFigures(root, notes)));
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
  notes.push(`Whole run took ${Math.round((Date.now() - started) / 1000)} s.`);
  process.stdout.write(`${consoleTable(figures)}\n`);
  process.stdout.write(`load average (1 min) at start / end: ${machine.loadAverage.start.toFixed(2)} / ${machine.loadAverage.end.toFixed(2)} on ${machine.cpus} CPUs\n`);
  if (sections.length < SECTIONS.length) return;
  const benchmarksPath = join(repoRoot, 'BENCHMARKS.md');
  const current = await readFile(benchmarksPath, 'utf8').catch(() => null);
  await writeFile(benchmarksPath, mergeBenchmarksFile(current, benchmarksMarkdown(figures, machine, notes)));
  process.stdout.write(`wrote ${join(repoRoot, 'BENCHMARKS.md')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
