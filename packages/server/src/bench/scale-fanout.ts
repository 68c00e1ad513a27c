/**
 * Fan-out across instances: 100 subscribers spread over two instances on one PostgreSQL (50 on
 * each), an open-loop publisher appending at 1,000 events/s through the first, so the second's
 * subscribers get every event by way of the database (NOTIFY hint, then a read). Baseline: the
 * same 100 subscribers (two receiver processes of 50, as on the cluster) on one Bubble on SQLite.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { FanoutJob, FanoutResult } from './fanout-subscribers.js';
import type { PublishJob, PublishResult } from './fanout-publisher.js';
import type { JitterResult } from './jitter-probe.js';
import { median, quantile, type Figure } from './bench-report.js';
import { sleep, stopProcess, Worker } from './bench-processes.js';
import { createThread, startBubble, type Bubble } from './bench-bubble.js';
import { log, serverBin, worker } from './bench-common.js';
import { createBenchDatabase, createPgHumans, startPgBubbles, stopAll } from './scale-cluster.js';

const RATE = 1_000;
const SUBSCRIBERS_PER_INSTANCE = 50;
const WARMUP_MS = 1_000;
const DURATION_MS = 5_000;
const ROUNDS = 3;
const SECTION = 'Fan-out across instances (append to receipt, 100 subscribers, 1,000 events/s)';

interface Pooled {
  p50: number;
  p99: number;
  /** Events the fewest-served and the best-served client got. */
  minPerClient: number;
  maxPerClient: number;
  closes: number;
}

function pool(results: readonly FanoutResult[]): Pooled {
  const sorted = Float64Array.from(results.flatMap((r) => r.samples ?? [])).sort();
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    minPerClient: Math.min(...results.map((r) => r.minPerClient)),
    maxPerClient: Math.max(...results.map((r) => r.maxPerClient)),
    closes: results.reduce((sum, r) => sum + r.unexpectedCloses, 0),
  };
}

/** One measured run: receivers on each of `on` (50 clients each), the publisher through `publishTo`. */
async function measure(publishTo: Bubble, on: readonly Bubble[]): Promise<FanoutResult[]> {
  const thread = await createThread(publishTo, 'scale fan-out');
  const receivers = on.map(
    (bubble) =>
      new Worker<FanoutJob>(worker('fanout-subscribers'), {
        wsUrl: `${bubble.url.replace('http', 'ws')}/v1/ws`,
        clients: SUBSCRIBERS_PER_INSTANCE,
        bubble: { token: bubble.token, threadId: thread.threadId, afterSeq: thread.headSeq },
        samples: true,
      }),
  );
  try {
    await Promise.all(receivers.map((r) => r.next<{ ready: true }>()));
    const publish = (durationMs: number) =>
      new Worker<PublishJob>(worker('fanout-publisher'), {
        url: `${publishTo.url}/v1/threads/${thread.threadId}/events`,
        tokens: publishTo.tokens,
        mode: 'bubble',
        ratePerSecond: RATE,
        durationMs,
      }).next<PublishResult>();
    const warm = await publish(WARMUP_MS);
    if (warm.failed > 0) throw new Error(`warm-up appends failed: ${warm.firstFailure}`);
    await sleep(300);
    for (const r of receivers) r.send('reset');
    await Promise.all(receivers.map((r) => r.next<{ reset: true }>()));
    const published = await publish(DURATION_MS);
    if (published.failed > 0) throw new Error(`appends failed: ${published.failed} (${published.firstFailure})`);
    await sleep(500);
    for (const r of receivers) r.send('stop');
    return await Promise.all(receivers.map((r) => r.next<FanoutResult>()));
  } finally {
    await Promise.all(receivers.map((r) => r.stop()));
  }
}

export async function scaleFanoutFigures(adminUrl: string, root: string, notes: string[]): Promise<Figure[]> {
  const db = await createBenchDatabase(adminUrl, 'fanout');
  const cluster: Bubble[] = [];
  let sqlite: Bubble | undefined;
  const rounds: Array<{ all: Pooled; same: Pooled; cross: Pooled; base: Pooled; jitter: JitterResult }> = [];
  try {
    cluster.push(...(await startPgBubbles(serverBin, db.url, await createPgHumans(db.url), 2)));
    sqlite = await startBubble(serverBin, await mkdtemp(join(root, 'scale-fanout-sqlite-')), 'on');
    const [a, b] = cluster as [Bubble, Bubble];
    for (let round = 0; round < ROUNDS; round += 1) {
      const jitterProbe = new Worker<Record<string, never>>(worker('jitter-probe'), {});
      await jitterProbe.next<{ ready: true }>();
      try {
        // Alternate which goes first in a round.
        let ours: FanoutResult[] = [];
        let base: FanoutResult[] = [];
        if (round % 2 === 0) {
          ours = await measure(a, [a, b]);
          base = await measure(sqlite, [sqlite, sqlite]);
        } else {
          base = await measure(sqlite, [sqlite, sqlite]);
          ours = await measure(a, [a, b]);
        }
        jitterProbe.send('stop');
        const result = {
          all: pool(ours),
          same: pool([ours[0]!]),
          cross: pool([ours[1]!]),
          base: pool(base),
          jitter: await jitterProbe.next<JitterResult>(),
        };
        rounds.push(result);
        log(
          `scale fan-out, round ${round + 1}: all p50 ${result.all.p50.toFixed(2)} p99 ${result.all.p99.toFixed(2)} ms; ` +
            `cross-instance p99 ${result.cross.p99.toFixed(2)}; same instance p99 ${result.same.p99.toFixed(2)}; ` +
            `sqlite p50 ${result.base.p50.toFixed(2)} p99 ${result.base.p99.toFixed(2)} ms; host jitter max ${result.jitter.max.toFixed(1)} ms`,
        );
      } finally {
        await jitterProbe.stop();
      }
    }
  } finally {
    await stopAll(cluster);
    if (sqlite) await stopProcess(sqlite.child);
    await db.drop();
  }

  const expected = (RATE * DURATION_MS) / 1000;
  const delivery = (pick: (r: (typeof rounds)[number]) => Pooled): string => {
    const min = Math.min(...rounds.map((r) => pick(r).minPerClient));
    const max = Math.max(...rounds.map((r) => pick(r).maxPerClient));
    const closes = rounds.reduce((sum, r) => sum + pick(r).closes, 0);
    return (
      (min === expected && max === expected
        ? `all ${expected} events reached every client in every round`
        : `${min} to ${max} of ${expected} events per client`) + (closes > 0 ? `, ${closes} sockets closed` : '')
    );
  };
  const ms = (values: number[]) => values.map((v) => v.toFixed(1)).join(' / ');
  const figure = (
    name: string,
    key: 'p50' | 'p99',
    pick: (r: (typeof rounds)[number]) => Pooled,
    target?: number,
  ): Figure => {
    const f: Figure = {
      section: SECTION,
      name,
      unit: 'ms',
      bubble: median(rounds.map((r) => pick(r)[key])),
      baseline: median(rounds.map((r) => r.base[key])),
      better: 'lower',
      note:
        `median of ${ROUNDS} rounds; ${key} per round ${ms(rounds.map((r) => pick(r)[key]))}, SQLite ${ms(rounds.map((r) => r.base[key]))} ms; ` +
        `host jitter max ${ms(rounds.map((r) => r.jitter.max))} ms; bubble: ${delivery(pick)}; SQLite: ${delivery((r) => r.base)}`,
    };
    if (target !== undefined) {
      f.target = `<= ${target} ms`;
      f.meetsTarget = f.bubble <= target;
    }
    return f;
  };
  notes.push(
    `Fan-out across instances: ${SUBSCRIBERS_PER_INSTANCE} subscribers on each of two instances (one receiver process per instance), an open-loop publisher ` +
      `at ${RATE}/s through the first instance, rate limits on; ${WARMUP_MS / 1000} s warm-up, ${DURATION_MS / 1000} s measured, ${ROUNDS} rounds. ` +
      "Latency is the receiver's clock minus the send time the publisher wrote into the event (one machine, one clock): the HTTP append, the durable commit, " +
      "and for the second instance's subscribers the NOTIFY, the read of the new events and the fan-out. Percentiles pool every subscriber's samples. " +
      'Baseline: one Bubble on SQLite with the same 100 subscribers in two receiver processes.',
  );
  return [
    figure('p50, all 100 subscribers (baseline: SQLite, one instance)', 'p50', (r) => r.all),
    figure('p99, all 100 subscribers (baseline: SQLite, one instance)', 'p99', (r) => r.all),
    figure('p50, the 50 on the other instance (cross-instance)', 'p50', (r) => r.cross),
    figure('p99, the 50 on the other instance (cross-instance)', 'p99', (r) => r.cross, 25),
    figure('p99, the 50 on the instance that took the appends', 'p99', (r) => r.same),
  ];
}
