/**
 * Growth benches, fan-out (issue #19): append-to-receipt latency at a fixed offered rate with
 * many subscribers on one thread, and with many connections spread over many threads, each at a
 * small and a large size, against bare `ws` (`baseline-ws-server.ts`) with the same receivers;
 * on one thread also against the floor: a relay that only writes the frames, coalesced the way
 * Bubble's hub writes them (`baseline-ws-server.ts --coalesce`), with a third set of receivers.
 *
 * One Bubble server (limits off, connection caps raised to fit) holds every thread, created
 * through the store before it starts with every bench human a member. In each case both sides'
 * receivers connect first and stay connected through the rounds; in each round Bubble and the
 * baseline take turns (alternating order), each with a warm-up, a reset, then the measured load.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { FanoutJob, FanoutResult } from './fanout-subscribers.js';
import type { PublishJob, PublishResult } from './fanout-publisher.js';
import type { DiskProbeResult } from './disk-probe.js';
import type { JitterResult } from './jitter-probe.js';
import { profiling, type GrowthOptions } from './growth-options.js';
import { median, quantile, type Figure, type GrowthRow } from './bench-report.js';
import {
  cpuMs,
  httpJson,
  runCommand,
  settleDisk,
  sleep,
  stopProcess,
  Worker,
  type StartedServer,
} from './bench-processes.js';
import { BENCH_HUMANS, startBubble, type Bubble } from './bench-bubble.js';
import { log, serverBin, startBaseline, worker } from './bench-common.js';
import { seedThreads } from './growth-seed.js';
import type { GrowthPart } from './growth-reads.js';

export const FANOUT_SECTION = 'Growth: fan-out (append to receipt)';
const WARMUP_MS = 1_000;
/** After the last append is answered, how long receivers may take to get the rest before it counts as missing. */
const DRAIN_LIMIT_MS = 30_000;
/** Below this many clients, one receiver process per side is enough. */
const ONE_PROCESS_UP_TO = 500;
/**
 * Past this many frames/s, bare `ws` (one `send`, so one syscall, per client per event) falls
 * behind without bound: at 1,000 subscribers and 1,000 events/s a 5 s load takes it about two
 * minutes to send. There it is offered the same rate for a shorter time, which only flatters it:
 * the longer it runs, the further behind it is.
 */
const BASELINE_FULL_LOAD_UP_TO = 200_000;
const BASELINE_SHORT_WARMUP_MS = 200;
const BASELINE_SHORT_MS = 1_000;

interface Case {
  key: 'one-small' | 'one-large' | 'spread-small' | 'spread-large';
  connections: number;
  threads: number;
}

interface Pooled {
  p50: number;
  p99: number;
  max: number;
  minPerClient: number;
  maxPerClient: number;
  closes: number;
  /** Receipts timed (the sampled clients' events). */
  timed: number;
  /** Receipt minus the event's `createdAt` (taken as the server commits it; ms resolution), p99, the worst receiver process's: the fan-out's share. */
  fromCreatedAtP99: number;
}

interface SideRound {
  pooled: Pooled;
  /** Server CPU over the warm-up and the measured load, as a share of one core. */
  cpu: number;
  /** The same CPU time per frame due to the receivers (warm-up and measured load), in µs: moves less with the machine's load. */
  cpuPerFrameUs: number;
  /** From the last append's answer until every receiver held every event (or the limit). */
  drainMs: number;
  /** The publisher's send time to the append's whole answer, p99 (the commit included, the fan-out not): the ingress share. */
  answeredP99: number;
}

type Side = 'ours' | 'base' | 'floor';

interface CaseResult {
  kase: Case;
  ours: SideRound[];
  base: SideRound[];
  /** The coalescing relay's rounds (one-thread cases only; empty otherwise). */
  floor: SideRound[];
  jitter: JitterResult[];
  disk: DiskProbeResult[];
  expected: { ours: number; base: number };
  /** How long the baseline's measured load ran (shorter than Bubble's where it cannot keep up). */
  baselineMs: number;
  measureEvery: number;
  processes: number;
}

const count = (n: number): string => n.toLocaleString('en-US');

function pool(results: readonly FanoutResult[]): Pooled {
  const sorted = Float64Array.from(results.flatMap((r) => r.samples ?? [])).sort();
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: quantile(sorted, 1),
    minPerClient: Math.min(...results.map((r) => r.minPerClient)),
    maxPerClient: Math.max(...results.map((r) => r.maxPerClient)),
    closes: results.reduce((sum, r) => sum + r.unexpectedCloses, 0),
    timed: sorted.length,
    fromCreatedAtP99: Math.max(...results.map((r) => r.fromCreatedAtP99)),
  };
}

/** One side's receivers, spread over processes; every client index is unique over them. */
function openReceivers(
  processes: number,
  clients: number,
  job: Omit<FanoutJob, 'clients' | 'first'>,
): Array<Worker<FanoutJob>> {
  const per = Math.ceil(clients / processes);
  const workers: Array<Worker<FanoutJob>> = [];
  for (let first = 0; first < clients; first += per)
    workers.push(
      new Worker<FanoutJob>(worker('fanout-subscribers'), {
        ...job,
        clients: Math.min(per, clients - first),
        first,
        samples: true,
      }),
    );
  return workers;
}

async function ask<T>(workers: ReadonlyArray<Worker<FanoutJob>>, command: string): Promise<T[]> {
  for (const w of workers) w.send(command);
  return Promise.all(workers.map((w) => w.next<T>()));
}

interface SideSetup {
  server: StartedServer;
  receivers: Array<Worker<FanoutJob>>;
  publish: Omit<PublishJob, 'durationMs'>;
  warmupMs: number;
  durationMs: number;
  /** Events every client should get in the measured load. */
  expectedPerClient: number;
  clients: number;
}

async function measureSide(side: SideSetup): Promise<SideRound> {
  const pid = side.server.child.pid ?? 0;
  const cpuBefore = await cpuMs(pid);
  const startedAt = performance.now();
  const run = (durationMs: number) =>
    new Worker<PublishJob>(worker('fanout-publisher'), { ...side.publish, durationMs }).next<PublishResult>(
      DRAIN_LIMIT_MS * 4,
    );
  const expectedTotal = side.expectedPerClient * side.clients;
  const expectedWarm = Math.floor((expectedTotal * side.warmupMs) / side.durationMs);
  const warm = await run(side.warmupMs);
  if (warm.failed > 0) throw new Error(`warm-up appends failed: ${warm.firstFailure}`);
  // The warm-up's frames are let in (or given up on) before the record starts again.
  await waitFor(side.receivers, expectedWarm);
  await ask(side.receivers, 'reset');
  const published = await run(side.durationMs);
  if (published.failed > 0) throw new Error(`appends failed: ${published.failed} (${published.firstFailure})`);
  const answeredAt = performance.now();
  await waitFor(side.receivers, expectedTotal);
  const drainMs = performance.now() - answeredAt;
  const used = (await cpuMs(pid)) - cpuBefore;
  return {
    pooled: pool(await ask<FanoutResult>(side.receivers, 'report')),
    cpu: used / (performance.now() - startedAt),
    cpuPerFrameUs: (used * 1000) / (expectedWarm + expectedTotal),
    drainMs,
    answeredP99: published.answeredP99,
  };
}

/** Waits until the receivers hold `total` event frames in all, or stop getting more, or the limit passes. */
async function waitFor(receivers: ReadonlyArray<Worker<FanoutJob>>, total: number): Promise<void> {
  const until = performance.now() + DRAIN_LIMIT_MS;
  let last = -1;
  let still = 0;
  while (performance.now() < until) {
    await sleep(100);
    const got = (await ask<{ received: number }>(receivers, 'progress')).reduce((sum, r) => sum + r.received, 0);
    if (got >= total) return;
    still = got === last ? still + 1 : 0;
    // Two seconds without a frame: what is missing is not coming.
    if (still >= 20) return;
    last = got;
  }
}

async function runCase(
  kase: Case,
  bubble: Bubble,
  threadIds: readonly string[],
  baseline: StartedServer,
  relay: StartedServer,
  options: GrowthOptions,
  /** A folder on the disk the server writes to, for the disk probe. */
  probeDir: string,
): Promise<CaseResult> {
  const threads = threadIds.slice(0, kase.threads);
  // Subscribe from each thread's head: earlier cases' events are no backlog of this one.
  const { threads: listed } = await httpJson<{ threads: Array<{ threadId: string; headSeq: number }> }>(
    'GET',
    `${bubble.url}/v1/threads`,
    bubble.token,
  );
  const heads = new Map(listed.map((t) => [t.threadId, t.headSeq]));
  const processes = kase.connections <= ONE_PROCESS_UP_TO ? 1 : options.receiverProcesses;
  // Timing every receipt of 1,000,000 frames/s would make the receivers the bottleneck on this machine; past
  // 100,000 receipts/s, every n-th client is timed (all of them still read, count and check every frame).
  const framesPerSecond = (kase.connections / kase.threads) * options.fanoutRate;
  const measureEvery = Math.max(1, Math.ceil(framesPerSecond / 100_000));
  const shortBaseline = framesPerSecond > BASELINE_FULL_LOAD_UP_TO;
  const baselineMs = shortBaseline ? BASELINE_SHORT_MS : options.fanoutDurationMs;
  // Every thread gets the same share (the publisher goes round them), so every client the same count.
  const perClient = (durationMs: number) =>
    Math.floor(Math.floor((options.fanoutRate * durationMs) / 1000) / kase.threads);
  const wsUrl = (server: StartedServer) => `${server.url.replace('http', 'ws')}/v1/ws`;
  const oursReceivers = openReceivers(processes, kase.connections, {
    wsUrl: wsUrl(bubble),
    bubble: { token: bubble.token, threadId: threads[0] as string, afterSeq: heads.get(threads[0] as string) ?? 0 },
    threads: threads.map((threadId) => ({ threadId, afterSeq: heads.get(threadId) ?? 0 })),
    tokens: bubble.tokens,
    measureEvery,
    openAtOnce: 50,
  });
  const baseReceivers = openReceivers(processes, kase.connections, {
    wsUrl: wsUrl(baseline),
    ...(kase.threads > 1 ? { topics: kase.threads } : {}),
    measureEvery,
    openAtOnce: 50,
  });
  // The relay floor only where one thread's frames go to every socket: that is where the writes are the work.
  const floorReceivers =
    kase.threads === 1
      ? openReceivers(processes, kase.connections, { wsUrl: wsUrl(relay), measureEvery, openAtOnce: 50 })
      : [];
  const sides: Partial<Record<Side, SideSetup>> = {
    ours: {
      server: bubble,
      receivers: oursReceivers,
      publish: {
        url: '',
        urls: threads.map((threadId) => `${bubble.url}/v1/threads/${threadId}/events`),
        tokens: bubble.tokens,
        mode: 'bubble',
        ratePerSecond: options.fanoutRate,
      },
      warmupMs: WARMUP_MS,
      durationMs: options.fanoutDurationMs,
      expectedPerClient: perClient(options.fanoutDurationMs),
      clients: kase.connections,
    },
    base: {
      server: baseline,
      receivers: baseReceivers,
      publish: {
        url: '',
        urls:
          kase.threads > 1 ? threads.map((_, k) => `${baseline.url}/publish?topic=${k}`) : [`${baseline.url}/publish`],
        mode: 'baseline',
        ratePerSecond: options.fanoutRate,
      },
      warmupMs: shortBaseline ? BASELINE_SHORT_WARMUP_MS : WARMUP_MS,
      durationMs: baselineMs,
      expectedPerClient: perClient(baselineMs),
      clients: kase.connections,
    },
  };
  if (floorReceivers.length > 0)
    sides.floor = {
      server: relay,
      receivers: floorReceivers,
      publish: { url: '', urls: [`${relay.url}/publish`], mode: 'baseline', ratePerSecond: options.fanoutRate },
      warmupMs: WARMUP_MS,
      durationMs: options.fanoutDurationMs,
      expectedPerClient: perClient(options.fanoutDurationMs),
      clients: kase.connections,
    };
  const order = Object.keys(sides) as Side[];
  const result: CaseResult = {
    kase,
    ours: [],
    base: [],
    floor: [],
    jitter: [],
    disk: [],
    expected: { ours: perClient(options.fanoutDurationMs), base: perClient(baselineMs) },
    baselineMs,
    measureEvery,
    processes,
  };
  try {
    const openedAt = performance.now();
    await Promise.all(
      [...oursReceivers, ...baseReceivers, ...floorReceivers].map((w) => w.next<{ ready: true }>(180_000)),
    );
    log(
      `growth fan-out ${describe(kase)}: ${order.map(() => count(kase.connections)).join(' + ')} sockets subscribed in ` +
        `${((performance.now() - openedAt) / 1000).toFixed(1)} s (${processes} receiver process${processes === 1 ? '' : 'es'} a side)`,
    );
    for (let round = 0; round < options.rounds; round += 1) {
      const jitterProbe = new Worker<Record<string, never>>(worker('jitter-probe'), {});
      const diskProbe = new Worker<{ dir: string }>(worker('disk-probe'), { dir: probeDir });
      await jitterProbe.next<{ ready: true }>();
      await diskProbe.next<{ ready: true }>();
      try {
        // Each side goes first in turn, so none always runs on a machine the others warmed.
        for (let k = 0; k < order.length; k += 1) {
          const on = order[(round + k) % order.length] as Side;
          result[on].push(await measureSide(sides[on] as SideSetup));
        }
        jitterProbe.send('stop');
        result.jitter.push(await jitterProbe.next<JitterResult>());
        diskProbe.send('stop');
        result.disk.push(await diskProbe.next<DiskProbeResult>());
      } finally {
        await jitterProbe.stop();
        await diskProbe.stop();
      }
      const ours = result.ours[round] as SideRound;
      const base = result.base[round] as SideRound;
      log(
        `growth fan-out ${describe(kase)}, round ${round + 1}: bubble p50 ${ours.pooled.p50.toFixed(2)} p99 ${ours.pooled.p99.toFixed(2)} ms, append answered p99 ${ours.answeredP99.toFixed(1)} ms, from commit p99 ${ours.pooled.fromCreatedAtP99.toFixed(0)} ms ` +
          `(CPU ${(ours.cpu * 100).toFixed(0)}%, drained ${ours.drainMs.toFixed(0)} ms, ${ours.pooled.minPerClient}-${ours.pooled.maxPerClient} of ${result.expected.ours}, ${ours.cpuPerFrameUs.toFixed(2)} µs CPU a frame); ` +
          `baseline p50 ${base.pooled.p50.toFixed(2)} p99 ${base.pooled.p99.toFixed(2)} ms (drained ${base.drainMs.toFixed(0)} ms, ` +
          `${base.pooled.minPerClient}-${base.pooled.maxPerClient} of ${result.expected.base}, ${base.cpuPerFrameUs.toFixed(2)} µs CPU a frame); ` +
          (result.floor[round] === undefined
            ? ''
            : `relay floor p50 ${(result.floor[round] as SideRound).pooled.p50.toFixed(2)} p99 ${(result.floor[round] as SideRound).pooled.p99.toFixed(2)} ms ` +
              `(CPU ${((result.floor[round] as SideRound).cpu * 100).toFixed(0)}%, ${(result.floor[round] as SideRound).cpuPerFrameUs.toFixed(2)} µs CPU a frame); `) +
          `host jitter max ${(result.jitter[round] as JitterResult).max.toFixed(1)} ms; ` +
          `disk sync max ${(result.disk[round] as DiskProbeResult).max.toFixed(1)} ms (${(result.disk[round] as DiskProbeResult).stallsOver20Ms} over 20 ms)`,
      );
    }
  } finally {
    await Promise.all([...oursReceivers, ...baseReceivers, ...floorReceivers].map((w) => w.stop()));
  }
  return result;
}

const describe = (kase: Case): string =>
  kase.threads === 1
    ? `${count(kase.connections)} subscribers on one thread`
    : `${count(kase.connections)} connections over ${count(kase.threads)} threads`;

export async function growthFanoutFigures(root: string, notes: string[], options: GrowthOptions): Promise<GrowthPart> {
  const cases: Case[] = [
    { key: 'one-small', connections: options.oneThreadSmall, threads: 1 },
    { key: 'one-large', connections: options.oneThreadLarge, threads: 1 },
    { key: 'spread-small', connections: options.spreadSmall.connections, threads: options.spreadSmall.threads },
    { key: 'spread-large', connections: options.spreadLarge.connections, threads: options.spreadLarge.threads },
  ];
  const most = Math.max(...cases.map((c) => c.connections));
  const mostThreads = Math.max(...cases.map((c) => c.threads));
  // Room for every receiver plus the publisher's keep-alive sockets; each receiver socket comes from one of
  // 200 loopback addresses, so a few hundred per address.
  const raised = [
    '--max-connections',
    String(most + 1_000),
    '--max-connections-per-address',
    String(Math.ceil(most / 200) + 256),
  ];
  let threadIds: string[] = [];
  const bubble = await startBubble(serverBin, await mkdtemp(join(root, 'growth-fanout-')), 'off', {
    seed: async (store) => {
      threadIds = await seedThreads(store, 'fan-out', mostThreads);
    },
    args: raised,
    nodeArgs: profiling(options),
  });
  const baseline = await startBaseline('baseline-ws-server', []);
  const relay = await startBaseline('baseline-ws-server', ['--coalesce']);
  // Every latency here starts with a durable commit: how fast this disk commits, as the fan-out starts.
  log(`growth fan-out: the disk settled (sync) in ${((await settleDisk()) / 1000).toFixed(1)} s`);
  const disk = JSON.parse(await runCommand(process.execPath, [worker('fsync-probe'), root])) as {
    commitsPerSecond: number;
  };
  log(`growth fan-out: disk ${Math.round(disk.commitsPerSecond)} durable single-row commits/s`);
  const results: CaseResult[] = [];
  try {
    for (const kase of cases) results.push(await runCase(kase, bubble, threadIds, baseline, relay, options, root));
  } finally {
    await stopProcess(bubble.child);
    await stopProcess(baseline.child);
    await stopProcess(relay.child);
  }
  notes.push(
    `Growth, fan-out: one Bubble (rate limits off; \`${raised.join(' ')}\`, the defaults being 4096 in all and 256 per address) holding ${count(mostThreads)} threads with every one of the ` +
      `${BENCH_HUMANS} bench humans a member, created through the store before it started. An open-loop publisher (its own process) appends one event per POST at ` +
      `${count(options.fanoutRate)}/s in all, going round the case's threads (so each of ${count(options.spreadLarge.threads)} threads gets ` +
      `${options.fanoutRate / options.spreadLarge.threads} event/s), each event carrying its send time; receivers (raw WebSocket clients, ` +
      `${options.receiverProcesses} processes a side past ${ONE_PROCESS_UP_TO} clients) take their receive time minus it: one clock on one machine. ` +
      `Client g authenticates as bench human g mod ${BENCH_HUMANS} and subscribes to thread g mod (threads). ` +
      `${WARMUP_MS / 1000} s warm-up, then ${options.fanoutDurationMs / 1000} s measured; after the last append is answered the receivers get up to ` +
      `${DRAIN_LIMIT_MS / 1000} s to hold every event (the drain time is printed), and an event not received by then counts as missing, not as a latency. ` +
      `Where the frames to receive pass 100,000/s, only every n-th client's frames are timed (n printed), so the receivers, on the same 2 CPUs, ` +
      'are not what is measured; every client still reads and counts every frame. ' +
      `${options.rounds} rounds per case, Bubble and the baseline in turn (alternating order) with both sides' sockets open throughout; each figure is the median of the rounds, ` +
      "each round's percentiles pooled over every timed receipt. Baseline: bare `ws` (`baseline-ws-server.ts`), one `send` per client per event, to all of its sockets " +
      'for one thread and to the sockets of one topic (standing in for a thread) when spread; past ' +
      `${count(BASELINE_FULL_LOAD_UP_TO)} frames/s it cannot keep up (a 5 s load takes it minutes to send), so there it is offered the same rate for ` +
      `${BASELINE_SHORT_MS / 1000} s after a ${BASELINE_SHORT_WARMUP_MS} ms warm-up: that only flatters it. ` +
      `When the fan-out started this disk allowed ${count(Math.round(disk.commitsPerSecond))} durable single-row commits/s (\`fsync-probe.ts\`): the append answer's p99 in each note is mostly that commit. ` +
      "Server CPU per frame is the server process's user + system time over the warm-up and the measured load divided by the frames due to the receivers. " +
      'The relay floor (one-thread cases): the same baseline process started with `--coalesce`, which encodes each posted frame once and writes every ' +
      "socket's queue in one write per flush with the hold Bubble's hub uses (`ws-hub.ts`), with no authentication, store or durable commit, and its own receivers " +
      'offered the same full load: what the writes alone cost on this machine, so the lowest latency any server writing these frames could show here.',
  );
  return report(results, options);
}

function report(results: readonly CaseResult[], options: GrowthOptions): GrowthPart {
  const figures: Figure[] = [];
  const byKey = new Map(results.map((r) => [r.kase.key, r]));
  const ms = (values: number[]) => values.map((v) => v.toFixed(1)).join(' / ');
  const us = (rounds: SideRound[]) => rounds.map((x) => x.cpuPerFrameUs.toFixed(2)).join(' / ');
  for (const r of results) {
    const delivery = (rounds: SideRound[], expected: number): string => {
      const min = Math.min(...rounds.map((x) => x.pooled.minPerClient));
      const max = Math.max(...rounds.map((x) => x.pooled.maxPerClient));
      const closes = rounds.reduce((sum, x) => sum + x.pooled.closes, 0);
      return (
        (min === expected && max === expected
          ? `all ${expected} events reached every client in every round`
          : `${min} to ${max} of ${expected} events per client`) + (closes > 0 ? `, ${closes} sockets closed` : '')
      );
    };
    for (const key of ['p50', 'p99'] as const) {
      const figure: Figure = {
        section: FANOUT_SECTION,
        name: `${key}, ${describe(r.kase)}`,
        unit: 'ms',
        bubble: median(r.ours.map((x) => x.pooled[key])),
        baseline: median(r.base.map((x) => x.pooled[key])),
        better: 'lower',
      };
      if (key === 'p99') {
        figure.note =
          `median of ${r.ours.length} rounds; p99 per round bubble ${ms(r.ours.map((x) => x.pooled.p99))}, baseline ${ms(r.base.map((x) => x.pooled.p99))} ms; ` +
          `max bubble ${ms(r.ours.map((x) => x.pooled.max))} ms; bubble server CPU ${r.ours.map((x) => `${(x.cpu * 100).toFixed(0)}%`).join(' / ')} of a core; ` +
          `drain after the last answer bubble ${r.ours.map((x) => x.drainMs.toFixed(0)).join(' / ')} ms, baseline ${r.base.map((x) => x.drainMs.toFixed(0)).join(' / ')} ms; ` +
          `bubble append answered (send to HTTP answer, the durable commit included) p99 ${ms(r.ours.map((x) => x.answeredP99))} ms; ` +
          `bubble createdAt (taken as the commit starts) to receipt p99 ${r.ours.map((x) => x.pooled.fromCreatedAtP99.toFixed(0)).join(' / ')} ms; ` +
          `host jitter max ${ms(r.jitter.map((j) => j.max))} ms; ` +
          `disk sync (4 KiB + fdatasync every 10 ms, \`disk-probe.ts\`) max ${ms(r.disk.map((d) => d.max))} ms, ${r.disk.map((d) => d.stallsOver20Ms).join(' / ')} syncs over 20 ms; ` +
          `${r.measureEvery === 1 ? 'every receipt timed' : `every ${r.measureEvery}th client timed (${count(r.ours[0]?.pooled.timed ?? 0)} receipts a round)`}; ` +
          `server CPU per frame delivered bubble ${us(r.ours)}, baseline ${us(r.base)} µs; ` +
          `bubble: ${delivery(r.ours, r.expected.ours)}; baseline: ${delivery(r.base, r.expected.base)}` +
          (r.baselineMs < options.fanoutDurationMs
            ? `; bare ws cannot keep up here, so it was offered the same rate for ${r.baselineMs / 1000} s only (it falls further behind the longer it runs)`
            : '');
        if (r.kase.key === 'one-large') {
          figure.target = '<= 25 ms';
          figure.meetsTarget = figure.bubble <= 25;
        }
      }
      figures.push(figure);
    }
    if (r.floor.length === 0) continue;
    for (const key of ['p50', 'p99'] as const) {
      const figure: Figure = {
        section: FANOUT_SECTION,
        name: `${key}, ${describe(r.kase)} (baseline: the relay floor)`,
        unit: 'ms',
        bubble: median(r.ours.map((x) => x.pooled[key])),
        baseline: median(r.floor.map((x) => x.pooled[key])),
        better: 'lower',
      };
      if (key === 'p99')
        figure.note =
          `p99 per round relay floor ${ms(r.floor.map((x) => x.pooled.p99))} ms, max ${ms(r.floor.map((x) => x.pooled.max))} ms; ` +
          `relay CPU ${r.floor.map((x) => `${(x.cpu * 100).toFixed(0)}%`).join(' / ')} of a core, ${us(r.floor)} µs per frame delivered; ` +
          `relay: ${delivery(r.floor, r.expected.ours)}`;
      figures.push(figure);
    }
  }
  const rows: GrowthRow[] = [];
  const value = (r: CaseResult, key: 'p50' | 'p99', side: 'ours' | 'base') => median(r[side].map((x) => x.pooled[key]));
  for (const [smallKey, largeKey, name] of [
    ['one-small', 'one-large', 'subscribers on one thread'],
    ['spread-small', 'spread-large', 'connections spread over threads'],
  ] as const) {
    const small = byKey.get(smallKey);
    const large = byKey.get(largeKey);
    if (small === undefined || large === undefined) continue;
    for (const key of ['p50', 'p99'] as const) {
      const row: GrowthRow = {
        name: `fan-out ${key}, ${name}`,
        unit: 'ms',
        small: { label: describe(small.kase), value: value(small, key, 'ours') },
        large: { label: describe(large.kase), value: value(large, key, 'ours') },
        baseline: { label: 'bare ws', value: value(large, key, 'base') },
        better: 'lower',
      };
      if (largeKey === 'one-large' && key === 'p99') {
        row.target = 'large <= 25 ms';
        row.meetsTarget = row.large.value <= 25;
      }
      rows.push(row);
    }
  }
  return { figures, rows };
}
