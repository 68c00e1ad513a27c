/** Durable appends/s, limits off and on, against bare `http` + better-sqlite3 with the same group commit. */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadJob, LoadResult } from './raw-http-load.js';
import { median, type Figure } from './bench-report.js';
import { cpuMs, stopProcess, Worker } from './bench-processes.js';
import { BENCH_HUMANS, createThread, type Limits } from './bench-bubble.js';
import { inTurn, log, named, startBaseline, startBubbles, stopBubbles, worker } from './bench-common.js';

const APPEND_WARMUP_MS = 1_000;
const APPEND_DURATION_MS = 5_000;
/** Rounds per append scenario (Bubble limits off and on in turn, then the baseline); each figure is the median. */
const APPEND_ROUNDS = 3;
/** One append body per bench human: a run belongs to the principal that opened it, so each has its own runId. */
const appendBody = (i: number): string =>
  JSON.stringify({
    type: 'message_part',
    data: {
      runId: `bench-run-${String(i).padStart(2, '0')}`,
      chunk: { type: 'text-delta', id: 't1', delta: 'lorem ipsum ' },
    },
  });
const APPEND_BODIES = Array.from({ length: BENCH_HUMANS }, (_, i) => appendBody(i));

async function load(job: LoadJob): Promise<LoadResult> {
  const w = new Worker<LoadJob>(worker('raw-http-load'), job);
  return w.next<LoadResult>();
}

function perSecond(result: LoadResult): number {
  return result.ok / (result.measuredMs / 1000);
}

export async function appendFigures(root: string, notes: string[], modes: readonly Limits[]): Promise<Figure[]> {
  const bubbles = await startBubbles(root, 'appends', modes);
  const baseline = await startBaseline('baseline-append-server', [await mkdtemp(join(root, 'baseline-appends-'))]);
  const figures: Figure[] = [];
  try {
    const scenarios = [
      { connections: 8, threads: 1 },
      { connections: 8, threads: 8 },
      { connections: 50, threads: 1 },
      { connections: 10, threads: 1 },
    ];
    let turn = 0;
    for (const { connections, threads } of scenarios) {
      const common = { bodies: APPEND_BODIES, connections, warmupMs: APPEND_WARMUP_MS, durationMs: APPEND_DURATION_MS };
      const ids = new Map<Limits, string[]>();
      for (const limits of modes) {
        const list: string[] = [];
        for (let i = 0; i < threads; i += 1)
          list.push((await createThread(bubbles.get(limits)!, `appends ${connections}x${threads} #${i}`)).threadId);
        ids.set(limits, list);
      }
      const ours = new Map<Limits, LoadResult[]>(modes.map((limits) => [limits, []]));
      /** Server CPU time per answer, in microseconds: steadier than throughput when other work shares the machine. */
      const cpuPerAnswer = new Map<Limits, number[]>(modes.map((limits) => [limits, []]));
      const bases: LoadResult[] = [];
      for (let round = 0; round < APPEND_ROUNDS; round += 1, turn += 1) {
        for (const limits of inTurn(modes, turn)) {
          const bubble = bubbles.get(limits)!;
          const cpuBefore = await cpuMs(bubble.child.pid ?? 0);
          const result = await load({
            ...common,
            tokens: bubble.tokens,
            host: bubble.host,
            port: bubble.port,
            paths: ids.get(limits)!.map((id) => `/v1/threads/${id}/events`),
          });
          cpuPerAnswer
            .get(limits)!
            .push((((await cpuMs(bubble.child.pid ?? 0)) - cpuBefore) * 1000) / Math.max(1, result.answered));
          ours.get(limits)!.push(result);
        }
        bases.push(
          await load({
            ...common,
            tokens: ['none'],
            host: baseline.host,
            port: baseline.port,
            paths: Array.from({ length: threads }, (_, i) => `/v1/threads/base_${connections}_${threads}_${i}/events`),
          }),
        );
      }
      const name = `${connections} connections, ${threads === 1 ? 'one thread' : `${threads} threads`}`;
      const problemsOf = (who: string, results: LoadResult[]): string => {
        const failed = results.reduce((sum, r) => sum + r.failed, 0);
        const socketErrors = results.reduce((sum, r) => sum + r.socketErrors, 0);
        const first = results.find((r) => r.firstFailure !== null)?.firstFailure ?? '-';
        return failed + socketErrors > 0 ? `${who}: ${failed} failed (${first}), ${socketErrors} socket errors` : '';
      };
      const cpuOff = cpuPerAnswer.has('off') ? median(cpuPerAnswer.get('off')!) : undefined;
      for (const limits of modes) {
        const results = ours.get(limits)!;
        const figure: Figure = {
          section: 'Durable appends',
          name: named(name, limits, modes),
          unit: '/s',
          bubble: median(results.map(perSecond)),
          baseline: median(bases.map(perSecond)),
          better: 'higher',
        };
        if (connections === 50) {
          figure.target = '>= 10,000/s and >= 0.5x baseline';
          figure.meetsTarget = figure.bubble >= 10_000 && figure.bubble >= 0.5 * figure.baseline;
        }
        const cpu = median(cpuPerAnswer.get(limits)!);
        const cpuNote = limits === 'on' && cpuOff !== undefined ? `, ${(cpu / cpuOff).toFixed(3)}x of limits off` : '';
        figure.note = [
          `median of ${APPEND_ROUNDS} rounds; per round bubble ${results.map((r) => Math.round(perSecond(r))).join(' / ')}, baseline ${bases.map((r) => Math.round(perSecond(r))).join(' / ')} /s`,
          `server CPU ${cpu.toFixed(0)} µs per append (median)${cpuNote}`,
          problemsOf(`bubble (limits ${limits})`, results),
          problemsOf('baseline', bases),
        ]
          .filter(Boolean)
          .join('; ');
        figures.push(figure);
        log(`appends ${name}, limits ${limits}: ${figure.note}`);
      }
    }
  } finally {
    await stopBubbles(bubbles);
    await stopProcess(baseline.child);
  }
  notes.push(
    `Appends: closed loop, one \`message_part\` text-delta event per POST on keep-alive connections (raw HTTP/1.1 client in its own process), ` +
      `each connection taking the ${BENCH_HUMANS} humans' tokens in turn; ` +
      `${APPEND_WARMUP_MS / 1000} s warm-up then ${APPEND_DURATION_MS / 1000} s measured, ${APPEND_ROUNDS} rounds per scenario, each figure the median; only 2xx answers count. ` +
      "Server CPU per append is the server process's user + system time over a whole load (warm-up included) divided by its answers: it moves less than throughput when other work shares the machine. " +
      'The 50- and 10-connection runs append to one thread (the hardest case for per-thread ordering).',
  );
  return figures;
}

/** Answers/s of the load generator against a server that does nothing (the baseline ws server's POST /publish with no sockets). */
export async function httpCeiling(): Promise<number> {
  const noop = await startBaseline('baseline-ws-server', []);
  try {
    const result = await load({
      host: noop.host,
      port: noop.port,
      paths: ['/publish'],
      tokens: ['none'],
      bodies: [appendBody(0)],
      connections: 50,
      warmupMs: APPEND_WARMUP_MS,
      durationMs: 3_000,
    });
    return perSecond(result);
  } finally {
    await stopProcess(noop.child);
  }
}
