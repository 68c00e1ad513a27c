/** Fan-out latency, append to receipt, at 1, 10 and 100 subscribers, limits off and on, against bare `ws`. */
import type { FanoutJob, FanoutResult } from './fanout-subscribers.js';
import type { PublishJob, PublishResult } from './fanout-publisher.js';
import type { DiskProbeResult } from './disk-probe.js';
import type { JitterResult } from './jitter-probe.js';
import { median, type Figure } from './bench-report.js';
import { cpuMs, settleDisk, sleep, stopProcess, Worker, type StartedServer } from './bench-processes.js';
import { BENCH_HUMANS, createThread, type Bubble, type Limits } from './bench-bubble.js';
import { inTurn, log, named, startBaseline, startBubbles, stopBubbles, worker } from './bench-common.js';

const FANOUT_RATE = 1_000;
const FANOUT_WARMUP_MS = 1_000;
const FANOUT_DURATION_MS = 5_000;
/** Rounds per subscriber count; each fan-out figure is the median of the rounds (one host stall skews one round). */
const FANOUT_ROUNDS = 3;

async function fanoutOnce(
  wsUrl: string,
  clients: number,
  bubble: FanoutJob['bubble'],
  publishTo: Omit<PublishJob, 'durationMs'>,
): Promise<FanoutResult> {
  const subscribers = new Worker<FanoutJob>(worker('fanout-subscribers'), {
    wsUrl,
    clients,
    ...(bubble ? { bubble } : {}),
  });
  try {
    await subscribers.next<{ ready: true }>();
    const warm = await new Worker<PublishJob>(worker('fanout-publisher'), {
      ...publishTo,
      durationMs: FANOUT_WARMUP_MS,
    }).next<PublishResult>();
    if (warm.failed > 0) throw new Error(`warm-up appends failed: ${warm.firstFailure}`);
    await sleep(300);
    subscribers.send('reset');
    await subscribers.next<{ reset: true }>();
    const published = await new Worker<PublishJob>(worker('fanout-publisher'), {
      ...publishTo,
      durationMs: FANOUT_DURATION_MS,
    }).next<PublishResult>();
    if (published.failed > 0) throw new Error(`appends failed: ${published.failed} (${published.firstFailure})`);
    await sleep(500);
    subscribers.send('stop');
    return await subscribers.next<FanoutResult>();
  } finally {
    await subscribers.stop();
  }
}

/** One round of one subscriber count: Bubble (limits off and on, in turn), then the baseline, with the host jitter probe running across all. */
interface FanoutRound {
  ours: Map<Limits, FanoutResult>;
  base: FanoutResult;
  jitter: JitterResult;
  disk: DiskProbeResult;
  /** CPU each Bubble server used during its part of the round, as a share of one core. */
  ourCpu: Map<Limits, number>;
}

async function fanoutRound(
  bubbles: Map<Limits, Bubble>,
  order: readonly Limits[],
  baseline: StartedServer,
  clients: number,
  /** A folder on the disk the servers write to, for the disk probe. */
  probeDir: string,
): Promise<FanoutRound> {
  const jitterProbe = new Worker<Record<string, never>>(worker('jitter-probe'), {});
  const diskProbe = new Worker<{ dir: string }>(worker('disk-probe'), { dir: probeDir });
  await jitterProbe.next<{ ready: true }>();
  await diskProbe.next<{ ready: true }>();
  try {
    const ours = new Map<Limits, FanoutResult>();
    const ourCpu = new Map<Limits, number>();
    for (const limits of order) {
      const bubble = bubbles.get(limits)!;
      const thread = await createThread(bubble, `fanout ${clients}`);
      const pid = bubble.child.pid ?? 0;
      const cpuBefore = await cpuMs(pid);
      const startedAt = performance.now();
      ours.set(
        limits,
        await fanoutOnce(
          `${bubble.url.replace('http', 'ws')}/v1/ws`,
          clients,
          { token: bubble.token, threadId: thread.threadId, afterSeq: thread.headSeq },
          {
            url: `${bubble.url}/v1/threads/${thread.threadId}/events`,
            tokens: bubble.tokens,
            mode: 'bubble',
            ratePerSecond: FANOUT_RATE,
          },
        ),
      );
      ourCpu.set(limits, ((await cpuMs(pid)) - cpuBefore) / (performance.now() - startedAt));
    }
    const base = await fanoutOnce(`${baseline.url.replace('http', 'ws')}/v1/ws`, clients, undefined, {
      url: `${baseline.url}/publish`,
      mode: 'baseline',
      ratePerSecond: FANOUT_RATE,
    });
    jitterProbe.send('stop');
    diskProbe.send('stop');
    return {
      ours,
      base,
      ourCpu,
      jitter: await jitterProbe.next<JitterResult>(),
      disk: await diskProbe.next<DiskProbeResult>(),
    };
  } finally {
    await jitterProbe.stop();
    await diskProbe.stop();
  }
}

export async function fanoutFigures(root: string, notes: string[], modes: readonly Limits[]): Promise<Figure[]> {
  log(`fan-out: the disk settled (sync) in ${((await settleDisk()) / 1000).toFixed(1)} s`);
  const bubbles = await startBubbles(root, 'fanout', modes);
  const baseline = await startBaseline('baseline-ws-server', []);
  const figures: Figure[] = [];
  const expected = (FANOUT_RATE * FANOUT_DURATION_MS) / 1000;
  const ms = (value: number): string => value.toFixed(1);
  const pct = (value: number): string => `${(value * 100).toFixed(0)}%`;
  try {
    for (const clients of [1, 10, 100]) {
      const rounds: FanoutRound[] = [];
      for (let round = 0; round < FANOUT_ROUNDS; round += 1) {
        const result = await fanoutRound(bubbles, inTurn(modes, round), baseline, clients, root);
        rounds.push(result);
        const ours = modes
          .map((limits) => {
            const r = result.ours.get(limits)!;
            return (
              `bubble (limits ${limits}) p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms ` +
              `(createdAt to receipt p50 ${r.fromCreatedAtP50.toFixed(0)} p99 ${r.fromCreatedAtP99.toFixed(0)}), server CPU ${pct(result.ourCpu.get(limits)!)}`
            );
          })
          .join('; ');
        log(
          `fan-out ${clients}, round ${round + 1}: ${ours}; baseline p50 ${result.base.p50.toFixed(2)} p99 ${result.base.p99.toFixed(2)} ms; ` +
            `host jitter max ${ms(result.jitter.max)} ms, ${result.jitter.stallsOver10Ms} stalls >= 10 ms; ` +
            `disk sync max ${ms(result.disk.max)} ms, ${result.disk.stallsOver20Ms} over 20 ms`,
        );
      }
      const delivery = (results: FanoutResult[]): string => {
        const min = Math.min(...results.map((r) => r.minPerClient));
        const max = Math.max(...results.map((r) => r.maxPerClient));
        const closes = results.reduce((sum, r) => sum + r.unexpectedCloses, 0);
        return (
          (min === expected && max === expected
            ? `all ${expected} events reached every client in every round`
            : `${min} to ${max} of ${expected} events per client`) + (closes > 0 ? `, ${closes} sockets closed` : '')
        );
      };
      for (const key of ['p50', 'p99'] as const) {
        for (const limits of modes) {
          const ours = rounds.map((r) => r.ours.get(limits)!);
          const figure: Figure = {
            section: 'Fan-out latency (append to receipt, 1,000 events/s)',
            name: named(`${key}, ${clients} subscriber${clients === 1 ? '' : 's'}`, limits, modes),
            unit: 'ms',
            bubble: median(ours.map((r) => r[key])),
            baseline: median(rounds.map((r) => r.base[key])),
            better: 'lower',
          };
          if (key === 'p99' && clients === 100) {
            figure.target = '<= 15 ms';
            figure.meetsTarget = figure.bubble <= 15;
          }
          if (key === 'p99') {
            figure.note =
              `median of ${FANOUT_ROUNDS} rounds; p99 per round bubble ${ours.map((r) => ms(r.p99)).join(' / ')}, baseline ${rounds.map((r) => ms(r.base.p99)).join(' / ')} ms; ` +
              `bubble createdAt to receipt p99 ${ours.map((r) => r.fromCreatedAtP99.toFixed(0)).join(' / ')} ms; ` +
              `bubble server CPU ${rounds.map((r) => pct(r.ourCpu.get(limits)!)).join(' / ')} of a core; ` +
              `host jitter max ${rounds.map((r) => ms(r.jitter.max)).join(' / ')} ms; ` +
              `disk sync (4 KiB + fdatasync every 10 ms) max ${rounds.map((r) => ms(r.disk.max)).join(' / ')} ms; ` +
              `bubble: ${delivery(ours)}; baseline: ${delivery(rounds.map((r) => r.base))}`;
          }
          figures.push(figure);
        }
      }
    }
  } finally {
    await stopBubbles(bubbles);
    await stopProcess(baseline.child);
  }
  notes.push(
    `Fan-out: an open-loop publisher sends one event per POST at ${FANOUT_RATE}/s with its send time in the event (the ${BENCH_HUMANS} humans' tokens in turn); ` +
      `subscribers (one process) take receive time minus send time. ${FANOUT_WARMUP_MS / 1000} s warm-up discarded, ${FANOUT_DURATION_MS / 1000} s measured, ` +
      `${FANOUT_ROUNDS} rounds per subscriber count (Bubble with limits off and on in turn, then the baseline, in each), each figure the median of the rounds. ` +
      'Bubble latency includes the HTTP append, validation, the durable commit and the fan-out; the baseline only relays the POST body to its sockets. ' +
      'A p99 over 5,000 events at 1,000/s is the 50th-worst event, so one 30 ms stall of the machine (see host jitter: an idle process timing 1 ms timers during the round) ' +
      "puts about 30 ms into that round's p99 whatever the server does; so does one slow sync of the disk for Bubble, whose appends are answered and " +
      'published only once durable (see disk sync: a 4 KiB write and `fdatasync` every 10 ms during the round, `disk-probe.ts`).',
  );
  return figures;
}
