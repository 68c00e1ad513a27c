/**
 * The sizes of the growth benches (issue #19), from environment variables so a quick run is
 * possible (`BENCH_BIG_EVENTS=200000 node packages/server/bench/server-bench.js --only growth`);
 * read once, by `server-bench.ts`, and frozen. The defaults are the issue's sizes.
 */

export interface GrowthOptions {
  /** Events in the small and the large thread (tail reads, middle pages, backlog replay). */
  readonly smallEvents: number;
  readonly bigEvents: number;
  /** Subscribers on one thread: the small and the large case. */
  readonly oneThreadSmall: number;
  readonly oneThreadLarge: number;
  /** Connections spread evenly over threads: the small case's and the large case's. */
  readonly spreadSmall: { readonly connections: number; readonly threads: number };
  readonly spreadLarge: { readonly connections: number; readonly threads: number };
  /** Events per second offered to the server in every fan-out case (spread over the threads). */
  readonly fanoutRate: number;
  readonly fanoutDurationMs: number;
  /** Rounds of each fan-out case and of the large replay (Bubble and its baseline in each, in turn). */
  readonly rounds: number;
  /** Receiver processes per side in the large fan-out cases. */
  readonly receiverProcesses: number;
  /** `BENCH_CPU_PROF=DIR`: the growth benches' Bubble servers run with `node --cpu-prof`, writing their profiles there. */
  readonly cpuProfDir?: string;
}

const KNOBS = {
  BENCH_SMALL_EVENTS: 1_000,
  BENCH_BIG_EVENTS: 1_000_000,
  BENCH_ONE_THREAD_SMALL: 100,
  BENCH_ONE_THREAD_SUBSCRIBERS: 1_000,
  BENCH_SPREAD_SMALL_CONNECTIONS: 1_000,
  BENCH_SPREAD_SMALL_THREADS: 100,
  BENCH_SPREAD_CONNECTIONS: 10_000,
  BENCH_SPREAD_THREADS: 1_000,
  BENCH_FANOUT_RATE: 1_000,
  BENCH_FANOUT_DURATION_MS: 5_000,
  BENCH_GROWTH_ROUNDS: 3,
  BENCH_RECEIVER_PROCESSES: 2,
} as const;

type Knob = keyof typeof KNOBS;

/** The knobs and their defaults, for the notes and the README. */
export const GROWTH_KNOBS: Readonly<Record<Knob, number>> = KNOBS;

/** Every knob not set takes its default; a set one must be a whole number of at least 1 (every problem is listed). */
export function growthOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): GrowthOptions {
  const errors: string[] = [];
  const read = (name: Knob): number => {
    const text = env[name];
    if (text === undefined || text === '') return KNOBS[name];
    const value = Number(text.replace(/[_,]/g, ''));
    if (!Number.isInteger(value) || value < 1) {
      errors.push(`${name} must be a whole number of at least 1, not ${JSON.stringify(text)}`);
      return KNOBS[name];
    }
    return value;
  };
  const options: GrowthOptions = {
    smallEvents: read('BENCH_SMALL_EVENTS'),
    bigEvents: read('BENCH_BIG_EVENTS'),
    oneThreadSmall: read('BENCH_ONE_THREAD_SMALL'),
    oneThreadLarge: read('BENCH_ONE_THREAD_SUBSCRIBERS'),
    spreadSmall: { connections: read('BENCH_SPREAD_SMALL_CONNECTIONS'), threads: read('BENCH_SPREAD_SMALL_THREADS') },
    spreadLarge: { connections: read('BENCH_SPREAD_CONNECTIONS'), threads: read('BENCH_SPREAD_THREADS') },
    fanoutRate: read('BENCH_FANOUT_RATE'),
    fanoutDurationMs: read('BENCH_FANOUT_DURATION_MS'),
    rounds: read('BENCH_GROWTH_ROUNDS'),
    receiverProcesses: read('BENCH_RECEIVER_PROCESSES'),
  };
  if (options.smallEvents < 100 || options.bigEvents < 100)
    errors.push(
      'BENCH_SMALL_EVENTS and BENCH_BIG_EVENTS must be at least 100 (a page of 50 at the tail and in the middle)',
    );
  if (errors.length > 0) throw new Error(`bench options:\n  ${errors.join('\n  ')}`);
  const cpuProfDir = env.BENCH_CPU_PROF;
  return Object.freeze({
    ...options,
    ...(cpuProfDir === undefined || cpuProfDir === '' ? {} : { cpuProfDir }),
    spreadSmall: Object.freeze(options.spreadSmall),
    spreadLarge: Object.freeze(options.spreadLarge),
  });
}

/** Whether these are the issue's sizes (every knob at its default): only such a run rewrites BENCHMARKS.md. */
export function atIssueSizes(options: GrowthOptions): boolean {
  const { cpuProfDir: _profiled, ...sizes } = options;
  return JSON.stringify(sizes) === JSON.stringify(growthOptionsFromEnv({}));
}

/** The node flags that make a server write a CPU profile, when asked for. */
export const profiling = (options: GrowthOptions): string[] =>
  options.cpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir];
