import { describe, expect, it } from 'vitest';
import { equalJitterDelay, exponentialCeiling, fullJitterDelay, sleep } from './backoff.js';

const live = { baseMs: 500, capMs: 30_000 };

describe('exponentialCeiling', () => {
  it.each([
    [0, 500],
    [1, 1_000],
    [2, 2_000],
    [5, 16_000],
    [6, 30_000],
    [50, 30_000],
    [-3, 500],
  ])('attempt %i has ceiling %i', (attempt, ceiling) => {
    expect(exponentialCeiling(attempt, live)).toBe(ceiling);
  });
});

describe('fullJitterDelay', () => {
  it.each([
    [0, 0, 0],
    [0, 0.5, 250],
    [3, 0.999, 3_996],
    [10, 0.999, 29_970],
    [10, 0, 0],
  ])('attempt %i with random %d waits %i ms', (attempt, random, delay) => {
    expect(fullJitterDelay(attempt, live, () => random)).toBe(delay);
  });

  it('never exceeds 30 s', () => {
    for (let attempt = 0; attempt < 40; attempt += 1)
      expect(fullJitterDelay(attempt, live, () => 0.999999)).toBeLessThan(30_000);
  });
});

describe('equalJitterDelay', () => {
  it.each([
    [0, 0, 250],
    [0, 0.999, 499],
    [4, 0, 4_000],
  ])('attempt %i with random %d waits %i ms', (attempt, random, delay) => {
    expect(equalJitterDelay(attempt, live, () => random)).toBe(delay);
  });
});

describe('sleep', () => {
  it('rejects with the signal reason when aborted', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});
