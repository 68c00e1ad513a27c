import { describe, expect, it } from 'vitest';
import { atIssueSizes, growthOptionsFromEnv, profiling } from './growth-options.js';

describe('growth bench options', () => {
  it("are the issue's sizes when nothing is set", () => {
    const options = growthOptionsFromEnv({});
    expect(options).toMatchObject({
      smallEvents: 1_000,
      bigEvents: 1_000_000,
      oneThreadLarge: 1_000,
      spreadLarge: { connections: 10_000, threads: 1_000 },
      fanoutRate: 1_000,
    });
    expect(atIssueSizes(options)).toBe(true);
    expect(Object.isFrozen(options)).toBe(true);
  });

  it('take BENCH_* variables for a quick run, which then leaves BENCHMARKS.md alone', () => {
    const options = growthOptionsFromEnv({ BENCH_BIG_EVENTS: '200_000', BENCH_SPREAD_CONNECTIONS: '2,000' });
    expect(options.bigEvents).toBe(200_000);
    expect(options.spreadLarge.connections).toBe(2_000);
    expect(atIssueSizes(options)).toBe(false);
  });

  it('list every bad value at once', () => {
    expect(() => growthOptionsFromEnv({ BENCH_BIG_EVENTS: 'lots', BENCH_GROWTH_ROUNDS: '0' })).toThrow(
      /BENCH_BIG_EVENTS must be a whole number[\s\S]*BENCH_GROWTH_ROUNDS must be a whole number/,
    );
  });

  it('profile the servers with BENCH_CPU_PROF, still at the issue sizes', () => {
    const options = growthOptionsFromEnv({ BENCH_CPU_PROF: '/tmp/prof' });
    expect(profiling(options)).toEqual(['--cpu-prof', '--cpu-prof-dir', '/tmp/prof']);
    expect(profiling(growthOptionsFromEnv({}))).toEqual([]);
    expect(atIssueSizes(options)).toBe(true);
  });
});
